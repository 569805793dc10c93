//! Versions, scans with own writes, statement rollback, group commit, GC and
//! recovery, against `MemoryStorage` (and a counting wrapper of it).

#![allow(clippy::unwrap_used)]

mod common;

use canyon_common::Error;
use canyon_storage::{KeyRange, Keyspace, MemoryStorage, Storage};
use canyon_txn::ReadMode::{Current, Snapshot};
use canyon_txn::{Durability, GcStats, TxnConfig, TxnManager, LAST_TS_KEY};
use common::*;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

fn kv(k: &[u8], v: &[u8]) -> (Vec<u8>, Vec<u8>) {
    (k.to_vec(), v.to_vec())
}

#[test]
fn history_visibility_after_many_updates() {
    let mgr = open();
    load(&mgr, &[(b"k", b"v0")]);
    // One open REPEATABLE READ snapshot after each of 40 updates.
    let mut readers = Vec::new();
    for i in 0..40u32 {
        let (s, mut tx) = begin(&mgr, RR);
        assert_eq!(read(&mut tx, b"k"), Some(format!("v{i}").into_bytes()));
        readers.push((s, tx, i));
        let (_s, mut w) = begin(&mgr, RR);
        write(&mut w, b"k", format!("v{}", i + 1).as_bytes()).unwrap();
        w.commit().unwrap();
    }
    assert_eq!(history_len(&mgr), 40);
    for (_s, tx, i) in &mut readers {
        let want = format!("v{i}").into_bytes();
        assert_eq!(read(tx, b"k"), Some(want.clone()));
        assert_eq!(
            scan_all(tx, false, Snapshot),
            vec![(b"k".to_vec(), want.clone())]
        );
        assert_eq!(
            scan_ix(tx, &KeyRange::all(), Snapshot),
            vec![(b"k".to_vec(), want)]
        );
        assert_eq!(tx.get(T, b"k", Current).unwrap(), Some(b"v40".to_vec()));
    }
    // Readers may take their snapshots in any order; GC must keep every version an
    // open snapshot needs.
    mgr.run_gc_once().unwrap();
    for (_s, tx, i) in &mut readers {
        assert_eq!(read(tx, b"k"), Some(format!("v{i}").into_bytes()));
    }
}

#[test]
fn delete_visibility() {
    let mgr = open();
    load(&mgr, &[(b"a", b"1"), (b"b", b"2")]);
    let (_s0, mut before) = begin(&mgr, RR);
    assert_eq!(read(&mut before, b"a"), Some(b"1".to_vec()));

    let (_s, mut d) = begin(&mgr, RR);
    delete(&mut d, b"a").unwrap();
    assert_eq!(read(&mut d, b"a"), None, "own delete");
    assert_eq!(scan_all(&mut d, false, Snapshot), vec![kv(b"b", b"2")]);
    d.commit().unwrap();

    let (_s1, mut between) = begin(&mgr, RR);
    assert_eq!(read(&mut between, b"a"), None);
    assert_eq!(read(&mut before, b"a"), Some(b"1".to_vec()));
    assert_eq!(
        scan_all(&mut before, false, Snapshot),
        vec![kv(b"a", b"1"), kv(b"b", b"2")]
    );

    // Re-insert: the tombstone moves to History; the middle snapshot still sees
    // no row, the old one the first version, a new one the new row.
    load(&mgr, &[(b"a", b"3")]);
    let (_s2, mut after) = begin(&mgr, RR);
    assert_eq!(read(&mut after, b"a"), Some(b"3".to_vec()));
    assert_eq!(read(&mut between, b"a"), None);
    assert_eq!(
        scan_all(&mut between, false, Snapshot),
        vec![kv(b"b", b"2")]
    );
    assert_eq!(
        scan_ix(&mut between, &KeyRange::all(), Snapshot),
        vec![kv(b"b", b"2")]
    );
    assert_eq!(read(&mut before, b"a"), Some(b"1".to_vec()));
    assert_eq!(
        scan_ix(&mut before, &KeyRange::all(), Snapshot),
        vec![kv(b"a", b"1"), kv(b"b", b"2")]
    );

    // Deleting a row that does not exist writes nothing.
    let writes_before = count(mgr.storage().as_ref(), Keyspace::Rows);
    let (_s3, mut nothing) = begin(&mgr, RR);
    delete(&mut nothing, b"zz").unwrap();
    nothing.commit().unwrap();
    assert_eq!(count(mgr.storage().as_ref(), Keyspace::Rows), writes_before);
}

#[test]
fn index_scan_recheck_with_old_snapshots_a_b_a() {
    // The row's indexed value goes A -> B -> A. Old snapshots must still find the
    // row through the key it had then; the caller's re-check of its predicate
    // drops offers made through a key the row does not have in the version read.
    let mgr = open();
    load(&mgr, &[(b"pk", b"A")]);
    let (_s0, mut s_a1) = begin(&mgr, RR);
    s_a1.snapshot_ts().unwrap();
    load(&mgr, &[(b"pk", b"B")]);
    let (_s1, mut s_b) = begin(&mgr, RR);
    s_b.snapshot_ts().unwrap();
    load(&mgr, &[(b"pk", b"A")]);
    let (_s2, mut s_a2) = begin(&mgr, RR);
    s_a2.snapshot_ts().unwrap();

    let only = |k: &[u8]| KeyRange::prefix(k);
    // Snapshot A1: found under A; the (ended) B entry is not yet relevant.
    assert_eq!(
        scan_ix(&mut s_a1, &only(b"A"), Snapshot),
        vec![kv(b"pk", b"A")]
    );
    assert_eq!(scan_ix(&mut s_a1, &only(b"B"), Snapshot), vec![]);
    // Snapshot B: the A entry is live again (offered with row B, dropped by the
    // re-check); found under B.
    assert_eq!(
        scan_ix_raw(&mut s_b, &only(b"A"), false, Snapshot),
        vec![(b"A".to_vec(), b"pk".to_vec(), b"B".to_vec())]
    );
    assert_eq!(scan_ix(&mut s_b, &only(b"A"), Snapshot), vec![]);
    assert_eq!(
        scan_ix(&mut s_b, &only(b"B"), Snapshot),
        vec![kv(b"pk", b"B")]
    );
    // Snapshot A2: the B entry ended before it; only A.
    assert_eq!(scan_ix_raw(&mut s_a2, &only(b"B"), false, Snapshot), vec![]);
    assert_eq!(
        scan_ix(&mut s_a2, &KeyRange::all(), Snapshot),
        vec![kv(b"pk", b"A")]
    );
    // Current mode: only live entries.
    assert_eq!(
        scan_ix_raw(&mut s_a1, &KeyRange::all(), false, Current),
        vec![(b"A".to_vec(), b"pk".to_vec(), b"A".to_vec())]
    );
    // Whole range at snapshot B: entries A (live) and B (ended at 3) both pass the
    // snapshot filter; the pk is yielded once, at its first entry (A), with the
    // row it had at the snapshot (B). The caller's predicate keeps it.
    assert_eq!(
        scan_ix_raw(&mut s_b, &KeyRange::all(), false, Snapshot),
        vec![(b"A".to_vec(), b"pk".to_vec(), b"B".to_vec())]
    );
    assert_eq!(
        scan_ix(&mut s_b, &KeyRange::all(), Snapshot),
        vec![kv(b"pk", b"B")]
    );
    assert_eq!(
        scan_ix_raw(&mut s_b, &KeyRange::all(), true, Snapshot),
        vec![(b"B".to_vec(), b"pk".to_vec(), b"B".to_vec())],
        "in reverse the first entry met is B"
    );
}

#[test]
fn index_range_bounds_are_key_prefixes() {
    let mgr = open();
    load(
        &mgr,
        &[
            (b"1", b"a"),
            (b"2", b"b"),
            (b"3", b"b"),
            (b"4", b"c"),
            (b"5", b"d"),
        ],
    );
    let (_s, mut tx) = begin(&mgr, RR);
    let r = |start, end| KeyRange { start, end };
    let pks = |v: Vec<(Vec<u8>, Vec<u8>)>| v.into_iter().map(|(pk, _)| pk).collect::<Vec<_>>();
    // b <= key <= c: both b rows (whatever their pk suffix) and the c row.
    let got = scan_ix(
        &mut tx,
        &r(
            Bound::Included(b"b".to_vec()),
            Bound::Included(b"c".to_vec()),
        ),
        Snapshot,
    );
    assert_eq!(pks(got), vec![b"2".to_vec(), b"3".to_vec(), b"4".to_vec()]);
    // b < key < d
    let got = scan_ix(
        &mut tx,
        &r(
            Bound::Excluded(b"b".to_vec()),
            Bound::Excluded(b"d".to_vec()),
        ),
        Snapshot,
    );
    assert_eq!(pks(got), vec![b"4".to_vec()]);
    // reverse
    let raw = scan_ix_raw(&mut tx, &KeyRange::all(), true, Snapshot);
    let order: Vec<_> = raw.into_iter().map(|(_, pk, _)| pk).collect();
    assert_eq!(
        order,
        vec![
            b"5".to_vec(),
            b"4".to_vec(),
            b"3".to_vec(),
            b"2".to_vec(),
            b"1".to_vec()
        ]
    );
    // Break stops at once.
    let mut n = 0;
    tx.scan_index(T, IX, &KeyRange::all(), false, Snapshot, &mut |_, _, _| {
        n += 1;
        ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn own_writes_merge_in_scan() {
    let mgr = open();
    load(
        &mgr,
        &[(b"a", b"1"), (b"c", b"3"), (b"d", b"4"), (b"g", b"7")],
    );
    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"b", b"2").unwrap(); // insert
    delete(&mut tx, b"d").unwrap(); // delete
    write(&mut tx, b"e", b"5").unwrap(); // insert
    write(&mut tx, b"g", b"70").unwrap(); // update
    write(&mut tx, b"h", b"8").unwrap(); // insert after the last stored row
    let want = vec![
        kv(b"a", b"1"),
        kv(b"b", b"2"),
        kv(b"c", b"3"),
        kv(b"e", b"5"),
        kv(b"g", b"70"),
        kv(b"h", b"8"),
    ];
    for mode in [Snapshot, Current] {
        assert_eq!(scan_all(&mut tx, false, mode), want);
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(scan_all(&mut tx, true, mode), rev);
    }
    // Bounded range and Break.
    let mut got = Vec::new();
    tx.scan(
        T,
        &KeyRange {
            start: Bound::Excluded(b"a".to_vec()),
            end: Bound::Included(b"g".to_vec()),
        },
        false,
        Snapshot,
        &mut |k, _| {
            got.push(k.to_vec());
            if k == b"e" {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    )
    .unwrap();
    assert_eq!(got, vec![b"b".to_vec(), b"c".to_vec(), b"e".to_vec()]);
    // Break on an own write at the tail.
    let mut n = 0;
    tx.scan(T, &KeyRange::prefix(b"h"), false, Snapshot, &mut |_, _| {
        n += 1;
        ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(n, 1);
    // Other tables see nothing of it.
    let mut other = 0;
    tx.scan(T + 1, &KeyRange::all(), false, Snapshot, &mut |_, _| {
        other += 1;
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(other, 0);
    // An empty (inverted) range is not an error.
    tx.scan(
        T,
        &KeyRange {
            start: Bound::Included(b"z".to_vec()),
            end: Bound::Included(b"a".to_vec()),
        },
        false,
        Snapshot,
        &mut |_, _| panic!("empty range"),
    )
    .unwrap();
    tx.commit().unwrap();
    let (_s2, mut after) = begin(&mgr, RR);
    assert_eq!(scan_all(&mut after, false, Snapshot), want);
}

#[test]
fn own_writes_merge_in_scan_index() {
    let mgr = open();
    load(&mgr, &[(b"1", b"a"), (b"2", b"c"), (b"3", b"e")]);
    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"2", b"f").unwrap(); // c -> f: moves past e
    write(&mut tx, b"4", b"b").unwrap(); // new row under b
    delete(&mut tx, b"3").unwrap(); // e disappears
    let raw = scan_ix_raw(&mut tx, &KeyRange::all(), false, Snapshot);
    assert_eq!(
        raw,
        vec![
            (b"a".to_vec(), b"1".to_vec(), b"a".to_vec()),
            (b"b".to_vec(), b"4".to_vec(), b"b".to_vec()),
            (b"f".to_vec(), b"2".to_vec(), b"f".to_vec()),
        ],
        "own rows only under their new keys, each pk once"
    );
    let mut rev = raw.clone();
    rev.reverse();
    assert_eq!(scan_ix_raw(&mut tx, &KeyRange::all(), true, Current), rev);
    // A range that only the old key of pk 2 falls in: nothing.
    assert_eq!(
        scan_ix_raw(&mut tx, &KeyRange::prefix(b"c"), false, Snapshot),
        vec![]
    );
    // Update twice in one transaction: only the latest key counts.
    write(&mut tx, b"2", b"g").unwrap();
    assert_eq!(
        scan_ix(&mut tx, &KeyRange::prefix(b"g"), Snapshot),
        vec![kv(b"2", b"g")]
    );
    assert_eq!(scan_ix(&mut tx, &KeyRange::prefix(b"f"), Snapshot), vec![]);
    tx.commit().unwrap();
    // After commit the index says the same, and no entry of the intermediate key f
    // was ever written.
    let (_s2, mut r) = begin(&mgr, RR);
    assert_eq!(
        scan_ix_raw(&mut r, &KeyRange::all(), false, Current),
        vec![
            (b"a".to_vec(), b"1".to_vec(), b"a".to_vec()),
            (b"b".to_vec(), b"4".to_vec(), b"b".to_vec()),
            (b"g".to_vec(), b"2".to_vec(), b"g".to_vec()),
        ]
    );
    assert_eq!(
        scan_ix_raw(&mut r, &KeyRange::prefix(b"f"), false, Snapshot),
        vec![]
    );
}

#[test]
fn statement_rollback() {
    let mgr = open();
    load(&mgr, &[(b"a", b"1"), (b"c", b"3")]);
    let (_s, mut tx) = begin(&mgr, RR);
    tx.begin_statement();
    write(&mut tx, b"a", b"10").unwrap();
    tx.begin_statement();
    write(&mut tx, b"b", b"2").unwrap();
    write(&mut tx, b"a", b"100").unwrap();
    write(&mut tx, b"a", b"1000").unwrap();
    delete(&mut tx, b"c").unwrap();
    tx.rollback_statement();
    assert_eq!(
        scan_all(&mut tx, false, Snapshot),
        vec![kv(b"a", b"10"), kv(b"c", b"3")]
    );
    assert!(tx.has_writes());
    // Locks taken by the failed statement stay held (as in InnoDB).
    let (_s2, mut other) = begin(&mgr, RR);
    other.set_lock_wait_timeout(Duration::from_millis(30));
    assert!(matches!(
        other.lock(&lock_key(b"b")),
        Err(Error::LockWaitTimeout)
    ));
    other.rollback();
    tx.commit().unwrap();
    assert_eq!(read_now(&mgr, b"a"), Some(b"10".to_vec()));
    assert_eq!(read_now(&mgr, b"b"), None);
    assert_eq!(read_now(&mgr, b"c"), Some(b"3".to_vec()));
    // The index is consistent with the committed rows: a -> 10, c -> 3.
    let (_s3, mut r) = begin(&mgr, RR);
    assert_eq!(
        scan_ix(&mut r, &KeyRange::all(), Current),
        vec![kv(b"a", b"10"), kv(b"c", b"3")]
    );
    assert_eq!(
        scan_ix_raw(&mut r, &KeyRange::all(), false, Current).len(),
        2
    );

    // Rolling back the only statement leaves no writes.
    let (_s4, mut t) = begin(&mgr, RR);
    t.begin_statement();
    write(&mut t, b"z", b"26").unwrap();
    t.rollback_statement();
    assert!(!t.has_writes());
    t.commit().unwrap();
}

#[test]
fn read_only_transactions_take_no_id() {
    let mgr = open();
    load(&mgr, &[(b"a", b"1")]);
    let (_s, mut tx) = begin(&mgr, RC);
    tx.begin_statement();
    assert_eq!(read(&mut tx, b"a"), Some(b"1".to_vec()));
    scan_all(&mut tx, false, Snapshot);
    assert_eq!(tx.id(), None);
    let before = mgr.visible_ts();
    tx.commit().unwrap();
    assert_eq!(
        mgr.visible_ts(),
        before,
        "a read-only commit takes no timestamp"
    );
}

#[test]
fn group_commit_shares_syncs() {
    let storage = Arc::new(CountingStorage::new(Duration::from_millis(3)));
    let mgr = open_on(storage.clone());
    const THREADS: usize = 8;
    const PER_THREAD: usize = 25;
    thread::scope(|sc| {
        for t in 0..THREADS {
            let mgr = &mgr;
            sc.spawn(move || {
                let s = mgr.session();
                for i in 0..PER_THREAD {
                    let mut tx = s.begin(RR);
                    let pk = format!("{t:02}-{i:03}");
                    write(&mut tx, pk.as_bytes(), b"v").unwrap();
                    tx.commit().unwrap();
                    // A commit is visible to the committer's next snapshot.
                    let mut r = s.begin(RC);
                    assert_eq!(read(&mut r, pk.as_bytes()), Some(b"v".to_vec()));
                    r.commit().unwrap();
                }
            });
        }
    });
    let commits = (THREADS * PER_THREAD) as u64;
    let syncs = storage.syncs.load(Ordering::SeqCst);
    eprintln!("group commit: {syncs} syncs for {commits} commits");
    assert!(syncs < commits, "{syncs} syncs for {commits} commits");
    assert!(syncs > 0);
    assert_eq!(mgr.visible_ts(), commits);
    let (_s, mut tx) = begin(&mgr, RR);
    assert_eq!(
        scan_all(&mut tx, false, Snapshot).len(),
        THREADS * PER_THREAD
    );
}

/// Commit moves each replaced version to History from what the transaction's
/// locked read saw (`get_locked`), not from a second storage read — except a
/// tombstone (GC may remove one without a row lock), a row read with plain `get`,
/// and past the per-transaction memory bound. The versions moved are the right
/// ones either way: an older snapshot reads them back.
#[test]
fn commit_reuses_the_locked_read_of_each_row_it_replaces() {
    let storage = Arc::new(CountingStorage::new(Duration::ZERO));
    // Without the row cache, which would answer the reads this test counts.
    let mgr = TxnManager::open(
        storage.clone(),
        TxnConfig {
            row_cache_bytes: 0,
            ..config()
        },
    )
    .unwrap();
    // Debug builds read every written row once more under the commit mutex, to
    // check commit rule 2.
    let check = |rows: u64| if cfg!(debug_assertions) { rows } else { 0 };
    load(&mgr, &[(b"a", b"1"), (b"b", b"2"), (b"t", b"3")]);
    let (_s, mut d) = begin(&mgr, RR);
    delete(&mut d, b"t").unwrap();
    d.commit().unwrap();
    let (_old, mut before) = begin(&mgr, RR);
    assert_eq!(read(&mut before, b"a"), Some(b"1".to_vec()));

    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"a", b"10").unwrap(); // live
    write(&mut tx, b"n", b"new").unwrap(); // absent
    delete(&mut tx, b"b").unwrap(); // live, deleted
    write(&mut tx, b"t", b"back").unwrap(); // a tombstone: read again
    write(&mut tx, b"a", b"11").unwrap(); // own write: nothing to remember
    let gets = storage.row_gets.load(Ordering::SeqCst);
    tx.commit().unwrap();
    assert_eq!(storage.row_gets.load(Ordering::SeqCst) - gets, 1 + check(4));

    for (pk, want) in [
        (b"a", Some(&b"1"[..])),
        (b"b", Some(b"2")),
        (b"t", None),
        (b"n", None),
    ] {
        assert_eq!(read(&mut before, pk), want.map(<[u8]>::to_vec), "{pk:?}");
    }
    for (pk, want) in [
        (b"a", Some(&b"11"[..])),
        (b"b", None),
        (b"t", Some(b"back")),
        (b"n", Some(b"new")),
    ] {
        assert_eq!(read_now(&mgr, pk), want.map(<[u8]>::to_vec), "{pk:?}");
    }

    // A plain current read remembers nothing.
    let (_s, mut tx) = begin(&mgr, RR);
    tx.lock(&lock_key(b"a")).unwrap();
    let old = tx.get(T, b"a", Current).unwrap().unwrap();
    tx.put(
        T,
        b"a".to_vec(),
        b"12".to_vec(),
        vec![(IX, old)],
        vec![(IX, b"12".to_vec())],
    );
    let gets = storage.row_gets.load(Ordering::SeqCst);
    tx.commit().unwrap();
    assert_eq!(storage.row_gets.load(Ordering::SeqCst) - gets, 1 + check(1));

    // Six 1 MiB rows: the first few are remembered, the rest read again.
    let big = vec![7u8; 1 << 20];
    let pks: Vec<[u8; 2]> = (0..6u8).map(|i| [b'm', i]).collect();
    let rows: Vec<(&[u8], &[u8])> = pks.iter().map(|p| (&p[..], &big[..])).collect();
    load(&mgr, &rows);
    let (_s, mut tx) = begin(&mgr, RR);
    for p in &pks {
        write(&mut tx, p, b"small").unwrap();
    }
    let gets = storage.row_gets.load(Ordering::SeqCst);
    tx.commit().unwrap();
    let reread = storage.row_gets.load(Ordering::SeqCst) - gets - check(6);
    assert!(reread > 0 && reread < 6, "{reread} of 6 rows read again");
    assert_eq!(read(&mut before, &pks[0]), None);
    let (_s, mut after_load) = begin(&mgr, RR);
    assert_eq!(read(&mut after_load, &pks[5]), Some(b"small".to_vec()));
}

/// A minimal executor for the futures of `Committing::durable`: polls on this
/// thread, parks between polls, and counts the polls.
fn block_on<F: std::future::Future>(fut: F) -> (F::Output, usize) {
    struct Unpark(thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    let mut polls = 0;
    loop {
        polls += 1;
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return (v, polls);
        }
        thread::park_timeout(Duration::from_secs(30));
        assert!(polls < 10_000, "a durable() future that is never woken");
    }
}

/// `commit_deferred` + `durable()`: the commit is written at once and its row
/// locks released (commit rule 6), but it is visible and acknowledged only once
/// synced (by the syncer thread, in shared rounds).
#[test]
fn deferred_commits_release_their_locks_at_the_write_and_wait_for_the_syncer() {
    let storage = Arc::new(CountingStorage::new(Duration::from_millis(30)));
    let mgr = open_on(storage.clone());
    load(&mgr, &[(b"a", b"1")]);
    let visible = mgr.visible_ts();

    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"a", b"2").unwrap();
    let committing = tx.commit_deferred().unwrap();
    assert!(!committing.is_done(), "a 30 ms sync cannot be over yet");
    assert_eq!(
        mgr.visible_ts(),
        visible,
        "not visible before it is durable"
    );
    // The next writer of the row gets its lock at once: its current read sees
    // the written version, its snapshot does not (not durable, so not visible).
    let (_s2, mut other) = begin(&mgr, RR);
    other.set_lock_wait_timeout(Duration::from_millis(5));
    assert_eq!(read(&mut other, b"a"), Some(b"1".to_vec()));
    other.lock(&lock_key(b"a")).unwrap();
    assert_eq!(other.get_locked(T, b"a").unwrap(), Some(b"2".to_vec()));
    assert_eq!(read(&mut other, b"a"), Some(b"1".to_vec()));
    let (r, polls) = block_on(committing.durable());
    r.unwrap();
    assert!(polls >= 2, "completed without ever waiting ({polls} polls)");
    assert_eq!(mgr.visible_ts(), visible + 1);
    assert_eq!(read_now(&mgr, b"a"), Some(b"2".to_vec()));
    drop(other);

    // Many deferred commits at once share sync rounds.
    const THREADS: usize = 8;
    let syncs = storage.syncs.load(Ordering::SeqCst);
    thread::scope(|sc| {
        for t in 0..THREADS {
            let mgr = &mgr;
            sc.spawn(move || {
                let s = mgr.session();
                for i in 0..5 {
                    let mut tx = s.begin(RR);
                    let pk = format!("{t}-{i}");
                    write(&mut tx, pk.as_bytes(), b"v").unwrap();
                    block_on(tx.commit_deferred().unwrap().durable()).0.unwrap();
                    assert_eq!(read_now(mgr, pk.as_bytes()), Some(b"v".to_vec()));
                }
            });
        }
    });
    let rounds = storage.syncs.load(Ordering::SeqCst) - syncs;
    assert!(
        rounds < (THREADS * 5) as u64,
        "{rounds} syncs for 40 commits"
    );
    assert_eq!(mgr.visible_ts(), visible + 1 + 40);

    // Dropping an unfinished commit waits for it, so it is visible afterwards.
    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"a", b"3").unwrap();
    let committing = tx.commit_deferred().unwrap();
    drop(committing);
    assert_eq!(read_now(&mgr, b"a"), Some(b"3".to_vec()));

    // Nothing written: done at once.
    let (_s, tx) = begin(&mgr, RR);
    assert!(tx.commit_deferred().unwrap().is_done());
}

/// A failed sync fails the deferred commits waiting on it, and later ones.
#[test]
fn deferred_commit_reports_a_failed_sync() {
    let storage = Arc::new(CountingStorage::new(Duration::from_millis(5)));
    let mgr = open_on(storage.clone());
    load(&mgr, &[(b"a", b"1")]);
    storage.fail_sync.store(true, Ordering::SeqCst);
    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"a", b"2").unwrap();
    let (r, _) = block_on(tx.commit_deferred().unwrap().durable());
    assert!(matches!(r, Err(Error::Io(_))), "{r:?}");
    assert_eq!(read_now(&mgr, b"a"), Some(b"1".to_vec()));
    storage.fail_sync.store(false, Ordering::SeqCst);
    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"b", b"1").unwrap();
    assert!(matches!(tx.commit_deferred(), Err(Error::Io(_))));
    // The lock of the failed commit was released.
    let (_s, mut tx) = begin(&mgr, RR);
    tx.set_lock_wait_timeout(Duration::from_secs(5));
    tx.lock(&lock_key(b"a")).unwrap();
}

/// Early lock release loses nothing acknowledged (commit rules 6 and 8): a
/// writer that read a written, not yet durable version commits after it, and
/// is durable only with it; a transaction that only read it under a lock
/// waits at COMMIT until it is durable; one that made no current read does not
/// wait at all.
#[test]
fn readers_of_a_released_row_are_acknowledged_only_once_it_is_durable() {
    let storage = Arc::new(CountingStorage::new(Duration::from_millis(40)));
    let mgr = open_on(storage.clone());
    load(&mgr, &[(b"a", b"1"), (b"b", b"1")]);
    let visible = mgr.visible_ts();

    let (_s1, mut t1) = begin(&mgr, RR);
    write(&mut t1, b"a", b"2").unwrap();
    let c1 = t1.commit_deferred().unwrap();
    assert!(!c1.is_done());

    // A dependent writer: reads "a" = 2 under the lock, writes "b" from it.
    let (_s2, mut t2) = begin(&mgr, RR);
    t2.lock(&lock_key(b"a")).unwrap();
    let a = t2.get_locked(T, b"a").unwrap().unwrap();
    write(&mut t2, b"b", &a).unwrap();
    let c2 = t2.commit_deferred().unwrap();

    // A locking reader that writes nothing.
    let (_s3, mut t3) = begin(&mgr, RR);
    t3.lock(&lock_key(b"a")).unwrap();
    assert_eq!(t3.get_locked(T, b"a").unwrap(), Some(b"2".to_vec()));
    let c3 = t3.commit_deferred().unwrap();
    assert!(
        !c3.is_done(),
        "a read-only COMMIT after reading an undurable version must wait"
    );

    // A snapshot reader that writes nothing: never waits.
    let (_s4, mut t4) = begin(&mgr, RR);
    assert_eq!(read(&mut t4, b"a"), Some(b"1".to_vec()));
    assert!(t4.commit_deferred().unwrap().is_done());

    let (r, _) = block_on(c3.durable());
    r.unwrap();
    assert!(
        mgr.visible_ts() > visible,
        "the read-only COMMIT returned before what it read was durable"
    );
    block_on(c2.durable()).0.unwrap();
    assert_eq!(mgr.visible_ts(), visible + 2, "t2 commits after t1");
    assert!(c1.is_done(), "t2 durable implies t1 durable");
    block_on(c1.durable()).0.unwrap();
    assert_eq!(read_now(&mgr, b"b"), Some(b"2".to_vec()));

    // With nothing in flight a locking reader's COMMIT is done at once.
    let (_s5, mut t5) = begin(&mgr, RR);
    t5.lock(&lock_key(b"a")).unwrap();
    t5.get_locked(T, b"a").unwrap();
    assert!(t5.commit_deferred().unwrap().is_done());
}

/// A sync that fails after early lock release: the writer, the dependent
/// writer and the locking reader of its version all get the error, and the
/// written value never becomes visible.
#[test]
fn a_failed_sync_fails_everyone_who_read_the_released_version() {
    let storage = Arc::new(CountingStorage::new(Duration::from_millis(30)));
    let mgr = open_on(storage.clone());
    load(&mgr, &[(b"a", b"1"), (b"b", b"1")]);
    storage.fail_sync.store(true, Ordering::SeqCst);

    let (_s1, mut t1) = begin(&mgr, RR);
    write(&mut t1, b"a", b"2").unwrap();
    let c1 = t1.commit_deferred().unwrap();
    let (_s3, mut t3) = begin(&mgr, RR);
    t3.lock(&lock_key(b"a")).unwrap();
    assert_eq!(t3.get_locked(T, b"a").unwrap(), Some(b"2".to_vec()));
    let c3 = t3.commit_deferred().unwrap();
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t2, b"b", b"2").unwrap();
    // t2 may be written before the failure is known, or refused at once.
    let r2 = t2.commit_deferred().map(|c| block_on(c.durable()).0);
    assert!(matches!(block_on(c1.durable()).0, Err(Error::Io(_))));
    assert!(matches!(block_on(c3.durable()).0, Err(Error::Io(_))));
    assert!(
        matches!(r2, Err(Error::Io(_)) | Ok(Err(Error::Io(_)))),
        "{r2:?}"
    );
    assert_eq!(read_now(&mgr, b"a"), Some(b"1".to_vec()));
    assert_eq!(read_now(&mgr, b"b"), Some(b"1".to_vec()));
}

/// The reason early lock release is safe, tested: writers increment one hot
/// counter (each reads the value the previous one released before it was
/// durable) and locking readers read it, all acknowledged only through
/// `durable()`; then the power goes. Whatever survives holds every
/// acknowledged increment and every value a reader was acknowledged for —
/// which fails without commit rule 8 (a reader acknowledged for a value whose
/// sync never came) or with locks released before the write.
#[test]
fn power_loss_keeps_everything_acknowledged_under_early_lock_release() {
    let storage = Arc::new(PowerLossStorage::new(Duration::from_millis(2)));
    let mgr = open_on(storage.clone());
    load(&mgr, &[(b"c", b"0")]);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let increments = std::sync::Mutex::new(Vec::new());
    let reads = std::sync::Mutex::new(Vec::new());
    // One locked read of the counter, an increment if `increment`, and the
    // commit awaited through `durable()`: the value acknowledged, or `None`
    // once the power is off (every later step fails).
    let round = |s: &canyon_txn::TxnSession, increment: bool| -> Option<i64> {
        let mut tx = s.begin(RR);
        tx.lock(&lock_key(b"c")).ok()?;
        let mut v = num(tx.get_locked(T, b"c").unwrap().unwrap());
        if increment {
            v += 1;
            write(&mut tx, b"c", v.to_string().as_bytes()).ok()?;
        }
        block_on(tx.commit_deferred().ok()?.durable()).0.ok()?;
        Some(v)
    };
    let survivor = thread::scope(|sc| {
        for (n, increment, acked) in [(4, true, &increments), (2, false, &reads)] {
            for _ in 0..n {
                let (round, stop, mgr) = (&round, &stop, &mgr);
                sc.spawn(move || {
                    let s = mgr.session();
                    while !stop.load(Ordering::Relaxed) {
                        let Some(v) = round(&s, increment) else { break };
                        acked.lock().unwrap().push(v);
                    }
                });
            }
        }
        thread::sleep(Duration::from_millis(300));
        let survivor = storage.power_off();
        stop.store(true, Ordering::Relaxed);
        survivor
    });
    let increments = increments.into_inner().unwrap();
    let reads = reads.into_inner().unwrap();
    assert!(
        increments.len() > 20,
        "too little progress: {}",
        increments.len()
    );
    assert!(
        reads.iter().any(|&v| v > 0),
        "readers never saw an increment"
    );
    let mut distinct = increments.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), increments.len(), "a lost update");

    let restarted = open_on(Arc::new(survivor));
    let c = num(read_now(&restarted, b"c").unwrap());
    let max_increment = *increments.iter().max().unwrap();
    let max_read = *reads.iter().max().unwrap();
    assert!(
        c >= max_increment,
        "increment {max_increment} was acknowledged, the restart has {c}"
    );
    assert!(
        c >= max_read,
        "a reader was acknowledged for {max_read}, the restart has {c}"
    );
}

#[test]
fn sync_failure_refuses_later_commits() {
    let storage = Arc::new(CountingStorage::new(Duration::ZERO));
    let mgr = open_on(storage.clone());
    load(&mgr, &[(b"a", b"1")]);
    storage.fail_sync.store(true, Ordering::SeqCst);
    let (_s, mut tx) = begin(&mgr, RR);
    write(&mut tx, b"a", b"2").unwrap();
    assert!(matches!(tx.commit(), Err(Error::Io(_))));
    // Not visible, and the manager refuses further commits.
    assert_eq!(read_now(&mgr, b"a"), Some(b"1".to_vec()));
    storage.fail_sync.store(false, Ordering::SeqCst);
    let (_s2, mut tx2) = begin(&mgr, RR);
    write(&mut tx2, b"b", b"1").unwrap();
    assert!(matches!(tx2.commit(), Err(Error::Io(_))));
    // Reads still work.
    assert_eq!(read_now(&mgr, b"a"), Some(b"1".to_vec()));
}

#[test]
fn periodic_durability_is_visible_at_once_and_syncs_in_background() {
    let storage = Arc::new(CountingStorage::new(Duration::ZERO));
    let mgr = TxnManager::open(
        storage.clone(),
        TxnConfig {
            durability: Durability::SyncPeriodically {
                interval: Duration::from_millis(5),
            },
            ..config()
        },
    )
    .unwrap();
    for i in 0..20u32 {
        load(&mgr, &[(&i.to_be_bytes(), b"v")]);
        assert_eq!(mgr.visible_ts(), u64::from(i) + 1);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while storage.syncs.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "no background sync");
        thread::sleep(Duration::from_millis(5));
    }
    // Dropping the manager stops the thread and syncs once more.
    let before = storage.syncs.load(Ordering::SeqCst);
    drop(mgr);
    assert!(storage.syncs.load(Ordering::SeqCst) > before);
}

#[test]
fn gc_removes_what_no_snapshot_needs_and_keeps_what_one_does() {
    let mgr = open();
    let st = mgr.storage().clone();
    load(&mgr, &[(b"a", b"a0"), (b"b", b"b0"), (b"c", b"c0")]);
    // An open snapshot sees a0, b0, c0.
    let (_s0, mut old) = begin(&mgr, RR);
    assert_eq!(scan_all(&mut old, false, Snapshot).len(), 3);
    for i in 1..=3 {
        load(&mgr, &[(b"a", format!("a{i}").as_bytes())]);
    }
    {
        let (_s, mut d) = begin(&mgr, RR);
        delete(&mut d, b"b").unwrap();
        d.commit().unwrap();
    }
    assert_eq!(history_len(&mgr), 4); // a0 a1 a2, b0
    let stats = mgr.run_gc_once().unwrap();
    // No snapshot can read a1 or a2 (none lies between their commits), but GC is
    // watermark-based: it keeps every version that ended after the oldest open
    // snapshot. So everything is kept while `old` is open.
    assert_eq!(stats.history_removed, 0, "{stats:?}");
    assert_eq!(stats.tombstones_removed, 0, "{stats:?}");
    assert_eq!(read(&mut old, b"a"), Some(b"a0".to_vec()));
    assert_eq!(read(&mut old, b"b"), Some(b"b0".to_vec()));
    assert_eq!(
        scan_ix(&mut old, &KeyRange::all(), Snapshot),
        vec![kv(b"a", b"a0"), kv(b"b", b"b0"), kv(b"c", b"c0")]
    );

    // A newer snapshot, then one more update of a: GC may drop what ended before
    // the newer snapshot once the old one is gone.
    old.commit().unwrap();
    let (_s1, mut mid) = begin(&mgr, RR);
    assert_eq!(read(&mut mid, b"a"), Some(b"a3".to_vec()));
    load(&mgr, &[(b"a", b"a4")]);
    let stats = mgr.run_gc_once().unwrap();
    assert_eq!(stats.history_removed, 4, "{stats:?}"); // a0 a1 a2 b0
    assert_eq!(stats.tombstones_removed, 1, "{stats:?}"); // b
    assert_eq!(stats.index_removed, 4, "{stats:?}"); // a0 a1 a2 b0 entries
    assert_eq!(history_len(&mgr), 1); // a3, needed by `mid`
    assert_eq!(read(&mut mid, b"a"), Some(b"a3".to_vec()));
    assert_eq!(read(&mut mid, b"b"), None);
    assert_eq!(
        scan_ix(&mut mid, &KeyRange::all(), Snapshot),
        vec![kv(b"a", b"a3"), kv(b"c", b"c0")]
    );
    mid.commit().unwrap();

    // Nobody reads: everything old goes; live data stays.
    let stats = mgr.run_gc_once().unwrap();
    assert_eq!(stats.history_removed, 1, "{stats:?}");
    assert_eq!(history_len(&mgr), 0);
    assert_eq!(count(st.as_ref(), Keyspace::Rows), 2);
    assert_eq!(count(st.as_ref(), Keyspace::Index), 2);
    assert_eq!(read_now(&mgr, b"a"), Some(b"a4".to_vec()));
    assert_eq!(read_now(&mgr, b"c"), Some(b"c0".to_vec()));
    assert_eq!(mgr.run_gc_once().unwrap().history_removed, 0);
}

#[test]
fn gc_keeps_an_index_entry_re_added_as_live() {
    // pk's key goes A -> B -> A: the ended B entry is garbage, the A entry (ended,
    // then re-added live) must survive GC.
    let mgr = open();
    load(&mgr, &[(b"pk", b"A")]);
    load(&mgr, &[(b"pk", b"B")]);
    load(&mgr, &[(b"pk", b"A")]);
    mgr.run_gc_once().unwrap();
    let (_s, mut r) = begin(&mgr, RR);
    assert_eq!(
        scan_ix(&mut r, &KeyRange::all(), Snapshot),
        vec![kv(b"pk", b"A")]
    );
    assert_eq!(count(mgr.storage().as_ref(), Keyspace::Index), 1);
}

/// What a GC pass deleted: (History entries, Index entries, Rows tombstones).
fn removed(stats: &GcStats) -> (u64, u64, u64) {
    (
        stats.history_removed,
        stats.index_removed,
        stats.tombstones_removed,
    )
}

/// Updates `a` twice and deletes `b`: 3 History entries (a0, a1, b0), 3 ended
/// index entries (the same versions' keys) and 1 Rows tombstone (b).
fn make_garbage(mgr: &Arc<TxnManager>) {
    load(mgr, &[(b"a", b"a0"), (b"b", b"b0")]);
    load(mgr, &[(b"a", b"a1")]);
    load(mgr, &[(b"a", b"a2")]);
    let (_s, mut d) = begin(mgr, RR);
    delete(&mut d, b"b").unwrap();
    d.commit().unwrap();
}

#[test]
fn gc_collects_queued_garbage_without_scanning() {
    let st = Arc::new(CountingStorage::new(Duration::ZERO));
    let mgr = open_on(st.clone());
    make_garbage(&mgr);
    assert_eq!(mgr.gc_queued_keys(), 3 + 3 + 1);
    let scans = st.history_scans.load(Ordering::SeqCst);
    let stats = mgr.run_gc_once().unwrap();
    assert!(
        !stats.swept,
        "a fresh store has nothing for a sweep: {stats:?}"
    );
    assert_eq!(removed(&stats), (3, 3, 1), "{stats:?}");
    assert_eq!(
        st.history_scans.load(Ordering::SeqCst),
        scans,
        "no History scan"
    );
    assert_eq!(mgr.gc_queued_keys(), 0);
    assert_eq!(history_len(&mgr), 0);
    assert_eq!(count(st.as_ref(), Keyspace::Rows), 1);
    assert_eq!(count(st.as_ref(), Keyspace::Index), 1);
    assert_eq!(read_now(&mgr, b"a"), Some(b"a2".to_vec()));
}

#[test]
fn gc_queue_leaves_a_re_inserted_row_and_a_held_snapshot_alone() {
    let mgr = open();
    let st = mgr.storage().clone();
    make_garbage(&mgr);
    // b comes back before GC runs: its queued tombstone is no longer one.
    load(&mgr, &[(b"b", b"b1")]);
    let (_s, mut old) = begin(&mgr, RR);
    assert_eq!(read(&mut old, b"a"), Some(b"a2".to_vec()));
    load(&mgr, &[(b"a", b"a3")]);
    let stats = mgr.run_gc_once().unwrap();
    // Everything up to `old`'s snapshot goes; a2 (ended after it) stays queued.
    assert_eq!(stats.tombstones_removed, 0, "{stats:?}");
    assert_eq!(read_now(&mgr, b"b"), Some(b"b1".to_vec()));
    assert_eq!(read(&mut old, b"a"), Some(b"a2".to_vec()));
    assert!(mgr.gc_queued_keys() > 0);
    old.commit().unwrap();
    mgr.run_gc_once().unwrap();
    assert_eq!(mgr.gc_queued_keys(), 0);
    assert_eq!(history_len(&mgr), 0);
    assert_eq!(count(st.as_ref(), Keyspace::Rows), 2);
    assert_eq!(count(st.as_ref(), Keyspace::Index), 2);
}

#[test]
fn gc_batches_rows_tombstones_by_their_interval() {
    let mgr = open_with(TxnConfig {
        gc_tombstone_interval: Duration::from_secs(3600),
        ..config()
    });
    make_garbage(&mgr);
    let stats = mgr.run_gc_once().unwrap();
    assert_eq!(
        stats.tombstones_removed, 1,
        "the first pass takes them: {stats:?}"
    );
    // Within the interval a pass collects old versions, not tombstones.
    load(&mgr, &[(b"c", b"c0")]);
    let (_s, mut d) = begin(&mgr, RR);
    delete(&mut d, b"c").unwrap();
    d.commit().unwrap();
    let stats = mgr.run_gc_once().unwrap();
    assert_eq!(removed(&stats), (1, 1, 0), "{stats:?}");
    assert_eq!(mgr.gc_queued_keys(), 1, "the tombstone waits in the queue");
    assert_eq!(read_now(&mgr, b"c"), None);
}

#[test]
fn gc_sweeps_garbage_left_by_an_earlier_process() {
    let st: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    // Old versions in the History keyspace (none in memory), as a process
    // whose memory for them was full leaves them.
    let on_disk = || TxnConfig {
        history_memory_bytes: 0,
        ..config()
    };
    {
        let mgr = TxnManager::open(st.clone(), on_disk()).unwrap();
        make_garbage(&mgr);
        // The process ends before any GC pass: the queue is lost with it.
    }
    let mgr = TxnManager::open(st.clone(), on_disk()).unwrap();
    assert_eq!(mgr.gc_queued_keys(), 0);
    let stats = mgr.run_gc_once().unwrap();
    assert!(stats.swept, "{stats:?}");
    assert_eq!(removed(&stats), (3, 3, 1), "{stats:?}");
    // Once swept, passes read the queue again.
    load(&mgr, &[(b"a", b"a9")]);
    let stats = mgr.run_gc_once().unwrap();
    assert!(!stats.swept, "{stats:?}");
    assert_eq!(stats.history_removed, 1, "{stats:?}");
    assert_eq!(history_len(&mgr), 0);
}

#[test]
fn gc_sweeps_what_a_failed_pass_had_popped() {
    let st = Arc::new(CountingStorage::new(Duration::ZERO));
    // Old versions in the History keyspace, whose deletes fail too.
    let mgr = TxnManager::open(
        st.clone(),
        TxnConfig {
            history_memory_bytes: 0,
            ..config()
        },
    )
    .unwrap();
    make_garbage(&mgr);
    st.fail_writes.store(true, Ordering::SeqCst);
    assert!(mgr.run_gc_once().is_err());
    assert_eq!(mgr.gc_queued_keys(), 0, "the pass took the keys");
    st.fail_writes.store(false, Ordering::SeqCst);
    let stats = mgr.run_gc_once().unwrap();
    assert!(stats.swept, "{stats:?}");
    assert_eq!(removed(&stats), (3, 3, 1), "{stats:?}");
    assert_eq!(history_len(&mgr), 0);
}

#[test]
fn gc_sweeps_what_a_full_queue_refused() {
    let mgr = open_with(TxnConfig {
        gc_queue_keys: 4,
        ..config()
    });
    let st = mgr.storage().clone();
    load(&mgr, &[(b"a", b"0")]);
    // A long snapshot holds the watermark back while the queue fills up.
    let (_s, mut old) = begin(&mgr, RR);
    assert_eq!(read(&mut old, b"a"), Some(b"0".to_vec()));
    for i in 1..=20 {
        load(&mgr, &[(b"a", i.to_string().as_bytes())]);
    }
    assert!(mgr.gc_queued_keys() <= 4);
    let stats = mgr.run_gc_once().unwrap();
    assert!(!stats.swept, "the refused garbage ended after the snapshot");
    assert_eq!(stats.history_removed, 0, "{stats:?}");
    assert_eq!(read(&mut old, b"a"), Some(b"0".to_vec()));
    old.commit().unwrap();
    let stats = mgr.run_gc_once().unwrap();
    assert!(stats.swept, "{stats:?}");
    assert_eq!(stats.history_removed, 20, "{stats:?}");
    assert_eq!(history_len(&mgr), 0);
    assert_eq!(count(st.as_ref(), Keyspace::Index), 1);
    assert_eq!(read_now(&mgr, b"a"), Some(b"20".to_vec()));
    // The sweep is done with: the next pass reads the queue.
    load(&mgr, &[(b"a", b"21")]);
    assert!(!mgr.run_gc_once().unwrap().swept);
}

#[test]
fn gc_concurrent_with_writers_and_readers_keeps_snapshots_consistent() {
    transfers_under_gc_keep_snapshots_consistent(config());
}

/// The same with room in memory for only a few old versions: they move
/// between memory and the History keyspace as GC frees memory (history.rs).
#[test]
fn gc_concurrent_with_old_versions_split_between_memory_and_storage() {
    transfers_under_gc_keep_snapshots_consistent(TxnConfig {
        history_memory_bytes: 1_000,
        ..config()
    });
}

fn transfers_under_gc_keep_snapshots_consistent(config: TxnConfig) {
    // Transfers between 8 accounts keep the total at 800; readers at REPEATABLE READ
    // sum every account twice (by key and by scan) while GC runs in a loop.
    let mgr = open_with(config);
    let accounts: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'k', i]).collect();
    let rows: Vec<(&[u8], &[u8])> = accounts
        .iter()
        .map(|a| (a.as_slice(), &b"100"[..]))
        .collect();
    load(&mgr, &rows);
    let stop = std::sync::atomic::AtomicBool::new(false);
    /// Stops the other threads however the reader's loop ends (a failed
    /// assertion would otherwise leave them running and the scope waiting).
    struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    thread::scope(|sc| {
        let _stop = StopOnDrop(&stop);
        for w in 0..2u64 {
            let (mgr, accounts, stop) = (&mgr, &accounts, &stop);
            sc.spawn(move || transfer_until(mgr, accounts, w + 1, 7, stop));
        }
        {
            let (mgr, stop) = (&mgr, &stop);
            sc.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    mgr.run_gc_once().unwrap();
                }
            });
        }
        let s = mgr.session();
        for _ in 0..300 {
            let mut tx = s.begin(RR);
            let by_key: i64 = accounts
                .iter()
                .map(|a| num(read(&mut tx, a).unwrap()))
                .sum();
            thread::yield_now();
            let by_scan: i64 = scan_all(&mut tx, false, Snapshot)
                .into_iter()
                .map(|(_, v)| num(v))
                .sum();
            assert_eq!((by_key, by_scan), (800, 800));
            tx.commit().unwrap();
        }
    });
}

#[test]
fn recovery_reopens_with_data_and_last_ts() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    let mgr = open_on(storage.clone());
    load(&mgr, &[(b"a", b"1")]);
    load(&mgr, &[(b"a", b"2"), (b"b", b"3")]);
    let last = mgr.visible_ts();
    assert_eq!(last, 2);
    assert_eq!(
        storage.get(Keyspace::Meta, LAST_TS_KEY).unwrap(),
        Some(2u64.to_be_bytes().to_vec())
    );
    drop(mgr);
    let mgr = open_on(storage.clone());
    assert_eq!(mgr.visible_ts(), last);
    let (_s, mut tx) = begin(&mgr, RR);
    assert_eq!(tx.snapshot_ts().unwrap(), last);
    assert_eq!(
        scan_all(&mut tx, false, Snapshot),
        vec![kv(b"a", b"2"), kv(b"b", b"3")]
    );
    tx.commit().unwrap();
    // The next commit continues the timestamp sequence: History keys stay unique.
    load(&mgr, &[(b"a", b"4")]);
    assert_eq!(mgr.visible_ts(), last + 1);
    let (_s2, mut t2) = begin(&mgr, RR);
    assert_eq!(read(&mut t2, b"a"), Some(b"4".to_vec()));
}

#[test]
fn corrupt_last_ts_is_reported() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    let mut b = canyon_storage::WriteBatch::new();
    b.put(Keyspace::Meta, LAST_TS_KEY.to_vec(), vec![1, 2, 3]);
    storage.write(b, true).unwrap();
    assert!(matches!(
        TxnManager::open(storage, config()),
        Err(Error::Corrupt(_))
    ));
}

static HOOK_CALLS: AtomicU64 = AtomicU64::new(0);

fn counting_hook(f: &mut dyn FnMut()) {
    HOOK_CALLS.fetch_add(1, Ordering::SeqCst);
    f();
}

#[test]
fn blocking_hook_wraps_lock_waits_and_commit_waits() {
    let mgr = open_with(TxnConfig {
        blocking_hook: Some(counting_hook),
        ..config()
    });
    let before = HOOK_CALLS.load(Ordering::SeqCst);
    load(&mgr, &[(b"a", b"1")]); // the commit's durability wait
    assert!(HOOK_CALLS.load(Ordering::SeqCst) > before);
    let (_s1, mut t1) = begin(&mgr, RR);
    let (_s2, mut t2) = begin(&mgr, RR);
    t1.lock(b"L").unwrap();
    t2.set_lock_wait_timeout(Duration::from_millis(10));
    let mid = HOOK_CALLS.load(Ordering::SeqCst);
    assert!(matches!(t2.lock(b"L"), Err(Error::LockWaitTimeout)));
    assert_eq!(HOOK_CALLS.load(Ordering::SeqCst), mid + 1);
}

#[test]
fn background_gc_runs_and_manager_drops_cleanly() {
    let mgr = open_with(TxnConfig {
        gc_interval: Duration::from_millis(5),
        ..config()
    });
    load(&mgr, &[(b"a", b"1")]);
    load(&mgr, &[(b"a", b"2")]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while history_len(&mgr) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "background GC never ran"
        );
        thread::sleep(Duration::from_millis(5));
    }
    let weak = Arc::downgrade(&mgr);
    drop(mgr);
    // The GC thread holds only a Weak: the manager is gone (or about to be, if
    // the thread was mid-pass).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while weak.upgrade().is_some() {
        assert!(std::time::Instant::now() < deadline);
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn random_lock_order_transfers_resolve_deadlocks_and_keep_the_sum() {
    // Writers lock accounts in random order, so deadlocks happen; victims roll back
    // and retry. No thread may hang, no lock may leak, and the total is conserved.
    let mgr = open();
    let accounts: Vec<Vec<u8>> = (0..5u8).map(|i| vec![b'k', i]).collect();
    let rows: Vec<(&[u8], &[u8])> = accounts
        .iter()
        .map(|a| (a.as_slice(), &b"100"[..]))
        .collect();
    load(&mgr, &rows);
    let deadlocks = AtomicU64::new(0);
    thread::scope(|sc| {
        for w in 0..4u64 {
            let (mgr, accounts, deadlocks) = (&mgr, &accounts, &deadlocks);
            sc.spawn(move || {
                let s = mgr.session();
                let mut seed = w * 7919 + 3;
                let mut done = 0;
                while done < 60 {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let (i, j) = ((seed >> 33) as usize % 5, (seed >> 45) as usize % 5);
                    if i == j {
                        continue;
                    }
                    let mut tx = s.begin(RR);
                    let r = (|| {
                        write(&mut tx, &accounts[i], b"tmp")?; // locks i first
                        thread::yield_now();
                        tx.lock(&lock_key(&accounts[j]))?; // then j
                        Ok::<_, Error>(())
                    })();
                    match r {
                        Ok(()) => {
                            // Undo the placeholder: recompute from current values.
                            tx.rollback_statement();
                            let a = num(tx.get(T, &accounts[i], Current).unwrap().unwrap());
                            let b = num(tx.get(T, &accounts[j], Current).unwrap().unwrap());
                            write(&mut tx, &accounts[i], (a - 1).to_string().as_bytes()).unwrap();
                            write(&mut tx, &accounts[j], (b + 1).to_string().as_bytes()).unwrap();
                            tx.commit().unwrap();
                            done += 1;
                        }
                        Err(Error::Deadlock) => {
                            deadlocks.fetch_add(1, Ordering::Relaxed);
                            assert!(tx.is_aborted());
                            tx.rollback();
                        }
                        Err(e) => panic!("unexpected {e:?}"),
                    }
                }
            });
        }
    });
    eprintln!("deadlocks resolved: {}", deadlocks.load(Ordering::Relaxed));
    let (_s, mut tx) = begin(&mgr, RR);
    let total: i64 = scan_all(&mut tx, false, Snapshot)
        .into_iter()
        .map(|(_, v)| num(v))
        .sum();
    assert_eq!(total, 500);
    // Every lock was released: a fresh transaction takes them all without waiting.
    tx.set_lock_wait_timeout(Duration::from_millis(1));
    for a in &accounts {
        tx.lock(&lock_key(a)).unwrap();
    }
}

#[test]
fn row_cache_answers_repeated_reads_and_follows_every_change() {
    let storage = Arc::new(CountingStorage::new(Duration::ZERO));
    let mgr = open_on(storage.clone());
    let gets = || storage.row_gets.load(Ordering::SeqCst);
    load(&mgr, &[(b"a", b"1"), (b"b", b"2")]);
    let (_s, mut old) = begin(&mgr, RR);
    let g0 = gets();
    assert_eq!(read(&mut old, b"a"), Some(b"1".to_vec()));
    assert_eq!(read(&mut old, b"a"), Some(b"1".to_vec()));
    assert_eq!(read_now(&mgr, b"a"), Some(b"1".to_vec()));
    assert_eq!(gets() - g0, 0, "the load's commit cached the rows it wrote");

    // A commit replaces the cached value under the row lock; the locked read
    // and the new snapshot read both come from the cache, the old snapshot
    // still reads its version from History.
    let (_s, mut tx) = begin(&mgr, RR);
    let g1 = gets();
    write(&mut tx, b"a", b"10").unwrap();
    tx.commit().unwrap();
    assert_eq!(read_now(&mgr, b"a"), Some(b"10".to_vec()));
    // Debug builds re-read each written row under the commit mutex (the
    // rule-2 check in commit.rs): one storage read, not the cache's doing.
    let rule2_check = u64::from(cfg!(debug_assertions));
    assert_eq!(gets() - g1, rule2_check);
    assert_eq!(read(&mut old, b"a"), Some(b"1".to_vec()));

    // A delete removes it; the old snapshot is unaffected; GC of the tombstone
    // and a re-insert leave nothing stale behind.
    let (_s, mut tx) = begin(&mgr, RR);
    delete(&mut tx, b"a").unwrap();
    tx.commit().unwrap();
    assert_eq!(read_now(&mgr, b"a"), None);
    assert_eq!(read(&mut old, b"a"), Some(b"1".to_vec()));
    drop(old);
    mgr.run_gc_once().unwrap();
    assert_eq!(read_now(&mgr, b"a"), None);
    load(&mgr, &[(b"a", b"back")]);
    assert_eq!(read_now(&mgr, b"a"), Some(b"back".to_vec()));

    // A row read from storage is cached by its first read (a second manager on
    // the same storage, read-only here, starts with an empty cache).
    let fresh = TxnManager::open(storage.clone(), config()).unwrap();
    let g2 = gets();
    for _ in 0..3 {
        assert_eq!(read_now(&fresh, b"b"), Some(b"2".to_vec()));
    }
    assert_eq!(gets() - g2, 1, "the first read fills, the others hit");
    drop(fresh);

    // Purging the table (DROP / TRUNCATE) empties its part of the cache.
    assert_eq!(read_now(&mgr, b"b"), Some(b"2".to_vec()));
    assert!(mgr.row_cache_stats().entries >= 2);
    mgr.purge_table(T, &[IX]).unwrap();
    assert_eq!(read_now(&mgr, b"a"), None);
    assert_eq!(read_now(&mgr, b"b"), None);
    let st = mgr.row_cache_stats();
    assert_eq!((st.entries, st.bytes), (0, 0), "{st:?}");
    assert!(st.hits >= 4 && st.misses >= 1, "{st:?}");
}

#[test]
fn transfers_through_a_tiny_row_cache_keep_every_snapshot_consistent() {
    // 2,000 accounts through a cache that holds about 500: fills, hits,
    // evictions and commit updates race on the same shards while readers check
    // the total at their snapshot, by key (through the cache) and by scan (not).
    let mgr = open_with(TxnConfig {
        row_cache_bytes: 64 * 1024,
        ..config()
    });
    let n = 2000usize;
    let accounts: Vec<Vec<u8>> = (0..n as u16).map(|i| i.to_be_bytes().to_vec()).collect();
    let rows: Vec<(&[u8], &[u8])> = accounts
        .iter()
        .map(|a| (a.as_slice(), &b"100"[..]))
        .collect();
    load(&mgr, &rows);
    let total = 100 * n as i64;
    let stop = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|sc| {
        for w in 0..3u64 {
            let (mgr, accounts, stop) = (&mgr, &accounts, &stop);
            sc.spawn(move || transfer_until(mgr, accounts, w + 11, 3, stop));
        }
        let s = mgr.session();
        for round in 0..60 {
            let mut tx = s.begin(if round % 2 == 0 { RR } else { RC });
            let by_key: i64 = accounts
                .iter()
                .map(|a| num(read(&mut tx, a).unwrap()))
                .sum();
            if round % 2 == 0 {
                let by_scan: i64 = scan_all(&mut tx, false, Snapshot)
                    .into_iter()
                    .map(|(_, v)| num(v))
                    .sum();
                assert_eq!(by_scan, total);
            }
            assert_eq!(by_key, total, "round {round}");
            tx.commit().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    let st = mgr.row_cache_stats();
    assert!(st.bytes <= st.capacity && st.hits > 0, "{st:?}");
    // Every cached value is the stored one.
    let (_s, mut tx) = begin(&mgr, RR);
    let stored: i64 = scan_all(&mut tx, false, Snapshot)
        .into_iter()
        .map(|(_, v)| num(v))
        .sum();
    let by_key: i64 = accounts
        .iter()
        .map(|a| num(read(&mut tx, a).unwrap()))
        .sum();
    assert_eq!((stored, by_key), (total, total));
}

/// Deferred lock waits: a conflicting lock fails at once with LockWaitPending,
/// the waiter is queued (FIFO, in the wait-for graph), the hand-over resolves
/// the wait, and ending it makes the lock the waiter's; a wait given up leaves
/// the queue, and a transaction dropped while queued is never handed the lock.
#[test]
fn deferred_lock_waits_queue_without_blocking() {
    let mgr = open();
    let (_s1, mut t1) = begin(&mgr, RR);
    let (_s2, mut t2) = begin(&mgr, RR);
    let (_s3, mut t3) = begin(&mgr, RR);
    t1.lock(b"L").unwrap();
    t2.set_deferred_lock_waits(true);
    assert!(t2.lock_wait().is_none());
    assert!(matches!(t2.lock(b"L"), Err(Error::LockWaitPending)));
    let wait = t2.lock_wait().expect("queued");
    assert!(!wait.is_granted());
    assert!(wait.deadline().is_some());
    // t3 queues behind t2 (blocking, short timeout): FIFO puts t2 first.
    t3.set_lock_wait_timeout(Duration::from_millis(20));
    assert!(matches!(t3.lock(b"L"), Err(Error::LockWaitTimeout)));
    t1.rollback();
    assert!(wait.is_granted(), "the hand-over went to the queued waiter");
    t2.end_lock_wait(None).unwrap();
    assert!(t2.lock_wait().is_none());
    t2.lock(b"L").unwrap(); // its own now: no wait
    t3.set_lock_wait_timeout(Duration::from_millis(20));
    assert!(matches!(t3.lock(b"L"), Err(Error::LockWaitTimeout)));
    // A wait given up: t3 (deferred now) queues behind t2 and withdraws.
    t3.set_deferred_lock_waits(true);
    assert!(matches!(t3.lock(b"L"), Err(Error::LockWaitPending)));
    let w3 = t3.lock_wait().expect("queued");
    assert!(matches!(
        t3.end_lock_wait(Some(Error::LockWaitTimeout)),
        Err(Error::LockWaitTimeout)
    ));
    t2.rollback();
    assert!(
        !w3.is_granted(),
        "a withdrawn waiter is not handed the lock"
    );
    let (_s4, mut t4) = begin(&mgr, RR);
    t4.set_lock_wait_timeout(Duration::from_millis(20));
    t4.lock(b"L").unwrap();
    // Dropped while queued: the waiter leaves with the transaction.
    assert!(matches!(t3.lock(b"L"), Err(Error::LockWaitPending)));
    drop(t3);
    t4.rollback();
    let (_s5, mut t5) = begin(&mgr, RR);
    t5.set_lock_wait_timeout(Duration::from_millis(20));
    t5.lock(b"L").expect("free: nobody was handed it");
}

/// A deferred wait that would close a cycle fails with a deadlock at once,
/// as a blocking one does, and the victim's queued wait goes with it.
#[test]
fn deferred_lock_waits_take_part_in_deadlock_detection() {
    let mgr = open();
    let (_s1, mut t1) = begin(&mgr, RR);
    let (_s2, mut t2) = begin(&mgr, RR);
    t1.set_deferred_lock_waits(true);
    t2.set_deferred_lock_waits(true);
    t1.lock(b"A").unwrap();
    t2.lock(b"B").unwrap();
    assert!(matches!(t1.lock(b"B"), Err(Error::LockWaitPending)));
    // t2 -> A would close t2 -> t1 -> t2.
    assert!(matches!(t2.lock(b"A"), Err(Error::Deadlock)));
    assert!(
        t1.lock_wait().expect("still queued").is_granted(),
        "t2's rollback handed B to t1"
    );
    t1.end_lock_wait(None).unwrap();
    t1.lock(b"B").unwrap();
}

/// A commit of more rows than `BULK_ROWS` (4096) sorts its index entries and
/// drops the written rows from the row cache instead of caching them
/// (commit.rs): what it stores and what every reader sees is what a small
/// commit gives — new rows, replaced rows (cached before), the index in
/// order, old versions for an older snapshot.
#[test]
fn a_bulk_commit_reads_like_any_commit() {
    let mgr = open();
    let pk = |i: u32| format!("p{i:06}").into_bytes();
    // Index keys in an order unrelated to the pks.
    let val = |i: u32, gen: u32| format!("v{:06}-{gen}", (i * 7919) % 10_007).into_bytes();
    load(&mgr, &[(&pk(1), &val(1, 0)), (&pk(2), &val(2, 0))]);
    // Both rows are read, so cached.
    assert_eq!(read_now(&mgr, &pk(1)), Some(val(1, 0)));
    assert_eq!(read_now(&mgr, &pk(2)), Some(val(2, 0)));
    let (_old, mut old_tx) = begin(&mgr, RR);
    assert_eq!(read(&mut old_tx, &pk(1)), Some(val(1, 0)));
    let s = mgr.session();
    let mut tx = s.begin(RR);
    for i in 1..=6000u32 {
        write(&mut tx, &pk(i), &val(i, 1)).unwrap();
    }
    tx.commit().unwrap();
    // The replaced rows read new (not the cached old value), new rows exist.
    assert_eq!(read_now(&mgr, &pk(1)), Some(val(1, 1)));
    assert_eq!(read_now(&mgr, &pk(2)), Some(val(2, 1)));
    assert_eq!(read_now(&mgr, &pk(6000)), Some(val(6000, 1)));
    // The older snapshot still reads the old version.
    assert_eq!(read(&mut old_tx, &pk(1)), Some(val(1, 0)));
    // The index: every row once, in index-key order, none of the ended keys.
    let (_s2, mut now) = begin(&mgr, RC);
    let by_ix = scan_ix(&mut now, &KeyRange::all(), Snapshot);
    assert_eq!(by_ix.len(), 6000);
    let mut want: Vec<(Vec<u8>, Vec<u8>)> = (1..=6000u32).map(|i| (pk(i), val(i, 1))).collect();
    want.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(by_ix, want);
    // The old snapshot's index scan sees the two rows it had (in no promised
    // order: mvcc.rs, "Exact index order for old snapshots").
    let mut old_ix = scan_ix(&mut old_tx, &KeyRange::all(), Snapshot);
    old_ix.sort_by(|a, b| a.1.cmp(&b.1));
    let mut want_old = vec![(pk(1), val(1, 0)), (pk(2), val(2, 0))];
    want_old.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(old_ix, want_old);
}
