//! Isolation tests named after the anomalies they check (Adya's names, as tested by
//! Hermitage: https://github.com/ept/hermitage). Each test says whether MySQL/InnoDB
//! allows the anomaly at that level and asserts Canyon's behaviour, which is
//! documented in docs/architecture/transactions.md.
//!
//! Writers always lock the row and read it with ReadMode::Current first (what the
//! SQL layer does for UPDATE/DELETE); plain SELECTs use ReadMode::Snapshot.

#![allow(clippy::unwrap_used)]

mod common;

use canyon_common::Error;
use canyon_storage::KeyRange;
use canyon_txn::ReadMode::{Current, Snapshot};
use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::thread;
use std::time::Duration;

const X: &[u8] = b"x";
const Y: &[u8] = b"y";

/// How long a test waits to be fairly sure another thread is blocked.
const SETTLE: Duration = Duration::from_millis(150);

#[test]
fn anomaly_g0_dirty_write_blocked() {
    // G0: two transactions' writes to the same rows interleave. Row locks make the
    // second writer wait until the first commits, so writes apply in commit order.
    let mgr = open();
    load(&mgr, &[(X, b"10"), (Y, b"20")]);
    let (_s1, mut t1) = begin(&mgr, RR);
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t1, X, b"11").unwrap();
    let t2_locked = AtomicBool::new(false);
    thread::scope(|sc| {
        let h = sc.spawn(|| {
            write(&mut t2, X, b"12").unwrap(); // blocks on t1's lock
            t2_locked.store(true, Ordering::SeqCst);
            write(&mut t2, Y, b"22").unwrap();
            t2.commit().unwrap();
        });
        thread::sleep(SETTLE);
        assert!(
            !t2_locked.load(Ordering::SeqCst),
            "t2 must wait for t1's lock"
        );
        write(&mut t1, Y, b"21").unwrap();
        t1.commit().unwrap();
        h.join().unwrap();
    });
    // t2 committed last and wrote both rows: no mix of t1's and t2's writes.
    assert_eq!(read_now(&mgr, X).as_deref(), Some(&b"12"[..]));
    assert_eq!(read_now(&mgr, Y).as_deref(), Some(&b"22"[..]));

    // With a short timeout the waiter gets LockWaitTimeout (1205) and stays usable.
    let (_s3, mut t3) = begin(&mgr, RR);
    let (_s4, mut t4) = begin(&mgr, RR);
    write(&mut t3, X, b"13").unwrap();
    t4.set_lock_wait_timeout(Duration::from_millis(50));
    t4.begin_statement();
    let r = write(&mut t4, X, b"14");
    assert!(matches!(r, Err(Error::LockWaitTimeout)), "{r:?}");
    assert!(Error::LockWaitTimeout.is_retryable());
    assert!(!Error::LockWaitTimeout.rolls_back_transaction());
    t4.rollback_statement();
    assert!(!t4.is_aborted());
    write(&mut t4, Y, b"24").unwrap(); // another row: fine
    t4.commit().unwrap();
    t3.commit().unwrap();
    assert_eq!(read_now(&mgr, X).as_deref(), Some(&b"13"[..]));
    assert_eq!(read_now(&mgr, Y).as_deref(), Some(&b"24"[..]));
}

#[test]
fn anomaly_g1a_aborted_read() {
    // G1a: reading a write of a transaction that later aborts. Never possible:
    // uncommitted writes never leave the writer's buffer.
    for iso in [RC, RR, canyon_txn::IsolationLevel::ReadUncommitted] {
        let mgr = open();
        load(&mgr, &[(X, b"10")]);
        let (_s1, mut t1) = begin(&mgr, RR);
        let (_s2, mut t2) = begin(&mgr, iso);
        write(&mut t1, X, b"101").unwrap();
        t2.begin_statement();
        assert_eq!(read(&mut t2, X).as_deref(), Some(&b"10"[..]));
        t1.rollback();
        t2.begin_statement();
        assert_eq!(read(&mut t2, X).as_deref(), Some(&b"10"[..]));
        assert_eq!(
            t2.get(common::T, X, Current).unwrap().as_deref(),
            Some(&b"10"[..])
        );
        t2.commit().unwrap();

        // Dropping an unfinished transaction is a rollback too.
        {
            let (_s3, mut t3) = begin(&mgr, RR);
            write(&mut t3, X, b"102").unwrap();
        }
        assert_eq!(read_now(&mgr, X).as_deref(), Some(&b"10"[..]));
    }
}

#[test]
fn anomaly_g1b_intermediate_read() {
    // G1b: reading a version that its writer later overwrote in the same
    // transaction. Only the final version of a transaction is ever written.
    for iso in [RC, RR] {
        let mgr = open();
        load(&mgr, &[(X, b"10")]);
        let (_s1, mut t1) = begin(&mgr, RR);
        let (_s2, mut t2) = begin(&mgr, iso);
        write(&mut t1, X, b"101").unwrap();
        t2.begin_statement();
        assert_eq!(read(&mut t2, X).as_deref(), Some(&b"10"[..]));
        write(&mut t1, X, b"11").unwrap();
        t1.commit().unwrap();
        t2.begin_statement();
        let seen = read(&mut t2, X);
        let expected: &[u8] = if iso == RC { b"11" } else { b"10" };
        assert_eq!(seen.as_deref(), Some(expected));
        t2.commit().unwrap();
        assert_eq!(read_now(&mgr, X).as_deref(), Some(&b"11"[..]));
    }
}

#[test]
fn anomaly_g1c_circular_information_flow() {
    // G1c: T1 sees T2's write and T2 sees T1's. Impossible: each sees only
    // committed data, and neither has committed while the other reads.
    for iso in [RC, RR] {
        let mgr = open();
        load(&mgr, &[(X, b"10"), (Y, b"20")]);
        let (_s1, mut t1) = begin(&mgr, iso);
        let (_s2, mut t2) = begin(&mgr, iso);
        write(&mut t1, X, b"11").unwrap();
        write(&mut t2, Y, b"22").unwrap();
        t1.begin_statement();
        t2.begin_statement();
        assert_eq!(read(&mut t1, Y).as_deref(), Some(&b"20"[..]));
        assert_eq!(read(&mut t2, X).as_deref(), Some(&b"10"[..]));
        t1.commit().unwrap();
        t2.commit().unwrap();
        assert_eq!(read_now(&mgr, X).as_deref(), Some(&b"11"[..]));
        assert_eq!(read_now(&mgr, Y).as_deref(), Some(&b"22"[..]));
    }
}

#[test]
fn anomaly_dirty_read_forbidden() {
    // P1 / G1: no level reads uncommitted data, through any access path.
    for iso in [canyon_txn::IsolationLevel::ReadUncommitted, RC, RR] {
        let mgr = open();
        load(&mgr, &[(X, b"10"), (Y, b"20")]);
        let (_s1, mut t1) = begin(&mgr, RR);
        write(&mut t1, X, b"11").unwrap();
        delete(&mut t1, Y).unwrap();
        write(&mut t1, b"z", b"30").unwrap();
        let (_s2, mut t2) = begin(&mgr, iso);
        t2.begin_statement();
        assert_eq!(read(&mut t2, X).as_deref(), Some(&b"10"[..]));
        assert_eq!(t2.get(T, X, Current).unwrap().as_deref(), Some(&b"10"[..]));
        let rows = scan_all(&mut t2, false, Snapshot);
        assert_eq!(
            rows,
            vec![(X.to_vec(), b"10".to_vec()), (Y.to_vec(), b"20".to_vec())]
        );
        let ix = scan_ix(&mut t2, &KeyRange::all(), Snapshot);
        assert_eq!(
            ix,
            vec![(X.to_vec(), b"10".to_vec()), (Y.to_vec(), b"20".to_vec())]
        );
        t1.commit().unwrap();
        t2.commit().unwrap();
    }
}

#[test]
fn anomaly_non_repeatable_read_rr_forbidden() {
    // P2 / OTV-free item reads: under REPEATABLE READ a row reads the same for the
    // whole transaction, by key, by scan and by index.
    let mgr = open();
    load(&mgr, &[(X, b"10")]);
    let (_s1, mut t1) = begin(&mgr, RR);
    t1.begin_statement();
    assert_eq!(read(&mut t1, X).as_deref(), Some(&b"10"[..]));
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t2, X, b"11").unwrap();
    t2.commit().unwrap();
    t1.begin_statement();
    assert_eq!(read(&mut t1, X).as_deref(), Some(&b"10"[..]));
    assert_eq!(
        scan_all(&mut t1, false, Snapshot),
        vec![(X.to_vec(), b"10".to_vec())]
    );
    assert_eq!(
        scan_ix(&mut t1, &KeyRange::all(), Snapshot),
        vec![(X.to_vec(), b"10".to_vec())]
    );
    // A locking (current) read sees the latest committed version, as in InnoDB.
    assert_eq!(t1.get(T, X, Current).unwrap().as_deref(), Some(&b"11"[..]));
    t1.commit().unwrap();
}

#[test]
fn anomaly_non_repeatable_read_rc_allowed() {
    // P2 is allowed under READ COMMITTED: each statement takes a fresh snapshot.
    // Within one statement the snapshot is stable.
    let mgr = open();
    load(&mgr, &[(X, b"10")]);
    let (_s1, mut t1) = begin(&mgr, RC);
    t1.begin_statement();
    assert_eq!(read(&mut t1, X).as_deref(), Some(&b"10"[..]));
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t2, X, b"11").unwrap();
    t2.commit().unwrap();
    assert_eq!(
        read(&mut t1, X).as_deref(),
        Some(&b"10"[..]),
        "same statement"
    );
    t1.begin_statement();
    assert_eq!(
        read(&mut t1, X).as_deref(),
        Some(&b"11"[..]),
        "next statement"
    );
    t1.commit().unwrap();
}

#[test]
fn anomaly_phantom_rr_snapshot_forbidden() {
    // P3 / PMP (predicate many preceders): a predicate read repeated under
    // REPEATABLE READ returns the same rows even if another transaction inserted or
    // deleted matching rows in between.
    let mgr = open();
    load(&mgr, &[(b"a", b"1"), (b"c", b"3")]);
    let (_s1, mut t1) = begin(&mgr, RR);
    t1.begin_statement();
    let before = scan_all(&mut t1, false, Snapshot);
    let before_ix = scan_ix(&mut t1, &KeyRange::prefix(b""), Snapshot);
    assert_eq!(before.len(), 2);
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t2, b"b", b"2").unwrap();
    delete(&mut t2, b"c").unwrap();
    t2.commit().unwrap();
    t1.begin_statement();
    assert_eq!(scan_all(&mut t1, false, Snapshot), before);
    assert_eq!(
        scan_ix(&mut t1, &KeyRange::prefix(b""), Snapshot),
        before_ix
    );
    t1.commit().unwrap();
}

#[test]
fn anomaly_phantom_rc_allowed() {
    // Under READ COMMITTED the next statement sees the phantom.
    let mgr = open();
    load(&mgr, &[(b"a", b"1")]);
    let (_s1, mut t1) = begin(&mgr, RC);
    t1.begin_statement();
    assert_eq!(scan_all(&mut t1, false, Snapshot).len(), 1);
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t2, b"b", b"2").unwrap();
    t2.commit().unwrap();
    t1.begin_statement();
    assert_eq!(scan_all(&mut t1, false, Snapshot).len(), 2);
    assert_eq!(scan_ix(&mut t1, &KeyRange::all(), Snapshot).len(), 2);
    t1.commit().unwrap();
}

#[test]
fn anomaly_lost_update_prevented_by_locking_read() {
    // P4 with SELECT ... FOR UPDATE: both transactions lock, then read current.
    // The second waits for the first and reads its result: no update is lost.
    for iso in [RC, RR] {
        let mgr = open();
        load(&mgr, &[(X, b"10")]);
        let increment = |tx: &mut canyon_txn::Transaction| {
            tx.lock(&lock_key(X)).unwrap();
            let v: u32 = String::from_utf8(tx.get(T, X, Current).unwrap().unwrap())
                .unwrap()
                .parse()
                .unwrap();
            write(tx, X, (v + 1).to_string().as_bytes()).unwrap();
        };
        let (_s1, mut t1) = begin(&mgr, iso);
        let (_s2, mut t2) = begin(&mgr, iso);
        increment(&mut t1);
        thread::scope(|sc| {
            let h = sc.spawn(|| {
                increment(&mut t2);
                t2.commit().unwrap();
            });
            thread::sleep(SETTLE);
            t1.commit().unwrap();
            h.join().unwrap();
        });
        assert_eq!(read_now(&mgr, X).as_deref(), Some(&b"12"[..]));
    }
}

#[test]
fn anomaly_lost_update_allowed_with_snapshot_read_then_write_rr() {
    // P4 when the application reads with a plain (snapshot) SELECT and then writes
    // a value computed from it: InnoDB allows this at REPEATABLE READ (an UPDATE
    // locks and writes the current row; there is no first-committer-wins check),
    // and so does Canyon. One of the two increments is lost.
    let mgr = open();
    load(&mgr, &[(X, b"10")]);
    let (_s1, mut t1) = begin(&mgr, RR);
    let (_s2, mut t2) = begin(&mgr, RR);
    let v1 = read(&mut t1, X).unwrap();
    let v2 = read(&mut t2, X).unwrap();
    assert_eq!((v1.as_slice(), v2.as_slice()), (&b"10"[..], &b"10"[..]));
    write(&mut t1, X, b"11").unwrap();
    t1.commit().unwrap();
    write(&mut t2, X, b"11").unwrap(); // 10 + 1, from its snapshot
    t2.commit().unwrap();
    assert_eq!(
        read_now(&mgr, X).as_deref(),
        Some(&b"11"[..]),
        "one update lost"
    );
}

#[test]
fn anomaly_write_skew_allowed_rr() {
    // G2-item (A5B): two doctors on call; each checks that the other is on call and
    // goes off call. Snapshot isolation (and InnoDB REPEATABLE READ without
    // locking reads) allows both to commit. SERIALIZABLE in MySQL prevents it by
    // making the reads locking — the SQL layer's job.
    let mgr = open();
    load(&mgr, &[(X, b"on"), (Y, b"on")]);
    let (_s1, mut t1) = begin(&mgr, RR);
    let (_s2, mut t2) = begin(&mgr, RR);
    assert_eq!(read(&mut t1, Y).as_deref(), Some(&b"on"[..]));
    assert_eq!(read(&mut t2, X).as_deref(), Some(&b"on"[..]));
    write(&mut t1, X, b"off").unwrap();
    write(&mut t2, Y, b"off").unwrap();
    t1.commit().unwrap();
    t2.commit().unwrap();
    assert_eq!(read_now(&mgr, X).as_deref(), Some(&b"off"[..]));
    assert_eq!(read_now(&mgr, Y).as_deref(), Some(&b"off"[..]));
}

#[test]
fn anomaly_write_skew_prevented_by_locking_reads() {
    // The same schedule with locking reads of both rows (what SERIALIZABLE's
    // reads become): the second transaction deadlocks or waits, never skews.
    let mgr = open();
    load(&mgr, &[(X, b"on"), (Y, b"on")]);
    let (_s1, mut t1) = begin(&mgr, canyon_txn::IsolationLevel::Serializable);
    let (_s2, mut t2) = begin(&mgr, canyon_txn::IsolationLevel::Serializable);
    t1.lock(&lock_key(Y)).unwrap();
    t2.lock(&lock_key(X)).unwrap();
    thread::scope(|sc| {
        let h = sc.spawn(|| write(&mut t1, X, b"off"));
        thread::sleep(SETTLE);
        let r2 = write(&mut t2, Y, b"off");
        let r1 = h.join().unwrap();
        // Exactly one of them is the deadlock victim.
        assert!(
            matches!(
                (&r1, &r2),
                (Ok(()), Err(Error::Deadlock)) | (Err(Error::Deadlock), Ok(()))
            ),
            "{r1:?} {r2:?}"
        );
    });
    let (r1, r2) = (t1.commit(), t2.commit());
    assert!(r1.is_ok() != r2.is_ok());
    let offs = [X, Y]
        .iter()
        .filter(|k| read_now(&mgr, k).as_deref() == Some(&b"off"[..]))
        .count();
    assert_eq!(offs, 1, "only one doctor went off call");
}

#[test]
fn anomaly_read_skew_g_single_rr_forbidden() {
    // G-single (read skew): T1 reads x, T2 moves 5 from x to y and commits, T1
    // reads y. Under REPEATABLE READ T1 sees x + y = 20.
    let mgr = open();
    load(&mgr, &[(X, b"10"), (Y, b"10")]);
    let (_s1, mut t1) = begin(&mgr, RR);
    t1.begin_statement();
    assert_eq!(read(&mut t1, X).as_deref(), Some(&b"10"[..]));
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t2, X, b"05").unwrap();
    write(&mut t2, Y, b"15").unwrap();
    t2.commit().unwrap();
    t1.begin_statement();
    assert_eq!(read(&mut t1, Y).as_deref(), Some(&b"10"[..]));
    t1.commit().unwrap();
}

#[test]
fn anomaly_read_skew_g_single_rc_allowed() {
    // Under READ COMMITTED the second statement sees T2's commit: x + y = 25.
    let mgr = open();
    load(&mgr, &[(X, b"10"), (Y, b"10")]);
    let (_s1, mut t1) = begin(&mgr, RC);
    t1.begin_statement();
    assert_eq!(read(&mut t1, X).as_deref(), Some(&b"10"[..]));
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t2, X, b"05").unwrap();
    write(&mut t2, Y, b"15").unwrap();
    t2.commit().unwrap();
    t1.begin_statement();
    assert_eq!(read(&mut t1, Y).as_deref(), Some(&b"15"[..]));
    t1.commit().unwrap();
}

#[test]
fn anomaly_otv_observed_transaction_vanishes() {
    // OTV: a reader sees some of T1's writes, then a later reader-visible state
    // shows T1's writes partly overwritten by uncommitted T2. Forbidden at every
    // level: T3 sees T1's x and y together, never T2's half.
    for iso in [RC, RR] {
        let mgr = open();
        load(&mgr, &[(X, b"10"), (Y, b"20")]);
        let (_s1, mut t1) = begin(&mgr, RR);
        let (_s2, mut t2) = begin(&mgr, RR);
        let (_s3, mut t3) = begin(&mgr, iso);
        write(&mut t1, X, b"11").unwrap();
        write(&mut t1, Y, b"19").unwrap();
        thread::scope(|sc| {
            let h = sc.spawn(|| {
                write(&mut t2, X, b"12").unwrap(); // waits for t1
                write(&mut t2, Y, b"18").unwrap();
                t2
            });
            thread::sleep(SETTLE);
            t1.commit().unwrap();
            let t2 = h.join().unwrap();
            t3.begin_statement();
            assert_eq!(read(&mut t3, X).as_deref(), Some(&b"11"[..]));
            t2.commit().unwrap();
            t3.begin_statement();
            let y = read(&mut t3, Y);
            let want: &[u8] = if iso == RC { b"18" } else { b"19" };
            assert_eq!(y.as_deref(), Some(want));
        });
        t3.commit().unwrap();
    }
}

#[test]
fn deadlock_detected_victim_gets_1213() {
    // Two transactions lock A and B in opposite orders. The one whose wait would
    // close the cycle gets Error::Deadlock (MySQL 1213, SQLSTATE 40001), is rolled
    // back at once (its locks released), and the other goes on.
    let mgr = open();
    load(&mgr, &[(b"a", b"1"), (b"b", b"2")]);
    let (_s1, mut t1) = begin(&mgr, RR);
    let (_s2, mut t2) = begin(&mgr, RR);
    write(&mut t1, b"a", b"t1").unwrap();
    write(&mut t2, b"b", b"t2").unwrap();
    let (r1, r2) = thread::scope(|sc| {
        let h = sc.spawn(|| write(&mut t1, b"b", b"t1"));
        thread::sleep(SETTLE);
        let r2 = write(&mut t2, b"a", b"t2");
        (h.join().unwrap(), r2)
    });
    let (mut winner, mut victim, r_victim) = match (r1, r2) {
        (Ok(()), Err(e)) => (t1, t2, e),
        (Err(e), Ok(())) => (t2, t1, e),
        other => panic!("expected exactly one victim: {other:?}"),
    };
    assert!(matches!(r_victim, Error::Deadlock));
    assert!(r_victim.rolls_back_transaction());
    assert!(victim.is_aborted());
    assert!(!victim.has_writes(), "the victim's writes are rolled back");
    assert!(matches!(
        victim.get(T, b"a", Snapshot),
        Err(Error::Deadlock)
    ));
    assert!(matches!(victim.lock(b"zz"), Err(Error::Deadlock)));
    write(&mut winner, b"c", b"3").unwrap();
    winner.commit().unwrap();
    assert!(matches!(victim.commit(), Err(Error::Deadlock)));
    let a = read_now(&mgr, b"a").unwrap();
    let b = read_now(&mgr, b"b").unwrap();
    assert_eq!(a, b, "both rows carry the winner's writes");
}

#[test]
fn deadlock_three_way() {
    // T1 -> T2 -> T3 -> T1 over rows a, b, c: exactly one victim; the other two
    // finish once it is rolled back.
    let mgr = open();
    load(&mgr, &[(b"a", b"0"), (b"b", b"0"), (b"c", b"0")]);
    let keys: [&[u8]; 3] = [b"a", b"b", b"c"];
    let barrier = Barrier::new(3);
    let results: Vec<_> = thread::scope(|sc| {
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let (mgr, barrier) = (&mgr, &barrier);
                sc.spawn(move || {
                    let (_s, mut tx) = begin(mgr, RR);
                    let me = format!("t{i}");
                    write(&mut tx, keys[i], me.as_bytes()).unwrap();
                    barrier.wait();
                    // Stagger the second locks so the cycle closes at the last one.
                    thread::sleep(SETTLE * i as u32);
                    match write(&mut tx, keys[(i + 1) % 3], me.as_bytes()) {
                        Ok(()) => tx.commit().map(|()| i),
                        Err(e) => {
                            tx.rollback();
                            Err(e)
                        }
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let victims = results
        .iter()
        .filter(|r| matches!(r, Err(Error::Deadlock)))
        .count();
    assert_eq!(victims, 1, "{results:?}");
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        2,
        "{results:?}"
    );
}
