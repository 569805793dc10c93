//! Functions that wait, across sessions of one engine: GET_LOCK between
//! sessions (a wait granted by the holder's release, a timeout, the deadlock
//! refusal 3058, locks released when their session ends), SLEEP woken by
//! KILL QUERY (it returns 1, as MySQL's), and a GET_LOCK wait ended by KILL
//! QUERY (1317).

mod common;

use canyon_common::Error;
use common::{ok, rows, run};
use std::time::{Duration, Instant};

fn scalar(s: &mut canyon_sql::Session, sql: &str) -> String {
    rows(s, sql)
        .pop()
        .and_then(|mut r| r.pop())
        .unwrap_or_else(|| panic!("{sql}: no value"))
}

/// Waits until `f` holds (at most 10 s).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn get_lock_waits_for_the_holder_times_out_and_ends_with_its_session() {
    let engine = common::engine(Duration::from_secs(5));
    let mut a = engine.session(1, "root", "localhost");
    let mut b = engine.session(2, "root", "localhost");
    assert_eq!(scalar(&mut a, "SELECT GET_LOCK('job', 10)"), "1");
    assert_eq!(scalar(&mut b, "SELECT IS_USED_LOCK('job')"), "1");
    assert_eq!(scalar(&mut b, "SELECT IS_FREE_LOCK('job')"), "0");
    // Another session's lock: not released by b; b's timeout passes.
    assert_eq!(scalar(&mut b, "SELECT RELEASE_LOCK('job')"), "0");
    let t0 = Instant::now();
    assert_eq!(scalar(&mut b, "SELECT GET_LOCK('job', 0.2)"), "0");
    assert!(
        t0.elapsed() >= Duration::from_millis(150),
        "{:?}",
        t0.elapsed()
    );

    // A waiter gets the lock when the holder releases it.
    let waiter = std::thread::spawn(move || {
        let got = scalar(&mut b, "SELECT GET_LOCK('job', 10)");
        (got, b)
    });
    eventually("b waits", || {
        rows(&mut a, "SELECT COUNT(*) FROM information_schema.processlist WHERE id = 2 AND command = 'Query'")
            == [["1"]]
    });
    assert_eq!(scalar(&mut a, "SELECT RELEASE_LOCK('job')"), "1");
    let (got, mut b) = waiter.join().expect("waiter");
    assert_eq!(got, "1");
    assert_eq!(scalar(&mut a, "SELECT IS_USED_LOCK('job')"), "2");

    // A session's end releases its locks.
    assert_eq!(scalar(&mut b, "SELECT GET_LOCK('other', 0)"), "1");
    drop(b);
    assert_eq!(
        scalar(&mut a, "SELECT IS_FREE_LOCK('job') + IS_FREE_LOCK('other')"),
        "2"
    );
    assert_eq!(scalar(&mut a, "SELECT GET_LOCK('other', 0)"), "1");
}

#[test]
fn a_get_lock_wait_that_would_deadlock_is_refused_with_3058() {
    let engine = common::engine(Duration::from_secs(5));
    let mut a = engine.session(1, "root", "localhost");
    let mut b = engine.session(2, "root", "localhost");
    assert_eq!(scalar(&mut a, "SELECT GET_LOCK('x', 0)"), "1");
    assert_eq!(scalar(&mut b, "SELECT GET_LOCK('y', 0)"), "1");
    let waiter = std::thread::spawn(move || {
        let got = scalar(&mut a, "SELECT GET_LOCK('y', 10)");
        (got, a)
    });
    eventually("a waits", || {
        rows(&mut b, "SELECT COUNT(*) FROM information_schema.processlist WHERE id = 1 AND command = 'Query'")
            == [["1"]]
    });
    // a waits for b's lock: b waiting for a's would close the cycle.
    let t0 = Instant::now();
    match run(&mut b, "SELECT GET_LOCK('x', 10)") {
        Err(Error::Sql { code: 3058, .. }) => {}
        other => panic!("expected 3058, got {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(5), "refused at once");
    assert_eq!(scalar(&mut b, "SELECT RELEASE_ALL_LOCKS()"), "1");
    let (got, _a) = waiter.join().expect("waiter");
    assert_eq!(got, "1");
}

#[test]
fn kill_query_wakes_sleep_with_1_and_ends_a_lock_wait_with_1317() {
    let engine = common::engine(Duration::from_secs(5));
    let mut victim = engine.session(1, "root", "localhost");
    let mut killer = engine.session(2, "root", "localhost");
    let running = |killer: &mut canyon_sql::Session| {
        rows(killer, "SELECT COUNT(*) FROM information_schema.processlist WHERE id = 1 AND command = 'Query'")
            == [["1"]]
    };

    let t0 = Instant::now();
    let sleeper = std::thread::spawn(move || {
        let r = scalar(&mut victim, "SELECT SLEEP(30)");
        (r, victim)
    });
    eventually("the sleep runs", || running(&mut killer));
    ok(&mut killer, "KILL QUERY 1");
    let (r, mut victim) = sleeper.join().expect("sleeper");
    assert_eq!(r, "1");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    // The KILL was for that statement only.
    assert_eq!(scalar(&mut victim, "SELECT SLEEP(0.01)"), "0");

    assert_eq!(scalar(&mut killer, "SELECT GET_LOCK('held', 0)"), "1");
    let waiter = std::thread::spawn(move || {
        let r = run(&mut victim, "SELECT GET_LOCK('held', -1)");
        (r, victim)
    });
    eventually("the lock wait runs", || running(&mut killer));
    ok(&mut killer, "KILL QUERY 1");
    let (r, mut victim) = waiter.join().expect("waiter");
    assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
    assert_eq!(scalar(&mut victim, "SELECT IS_USED_LOCK('held')"), "2");
}
