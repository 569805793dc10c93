//! Two-phase commit across two Canyon nodes, with the test as the
//! transaction manager, and kill -9 of either node between PREPARE and
//! COMMIT.
//!
//! Each node (its own process and RocksDB directory) holds ten accounts and
//! a ledger. A transfer moves an amount from an account on one node to an
//! account on the other: one XA branch per node (same gtrid, bqual 'a' or
//! 'b'), each updating its account and inserting the transfer's ledger row.
//! The coordinator does what a JTA transaction manager does:
//!
//! ```text
//!   log Pending(x) ─ XA START / work / XA END on both ─ XA PREPARE a, b
//!        │ any failure before both PREPAREs answered: log Abort(x), drop the
//!        │ connections (the server rolls back an unprepared branch; a
//!        │ prepared one is left to recovery)
//!        ▼
//!   log Commit(x) ─ XA COMMIT a, b ─ both answered OK: acknowledged
//!        │ a COMMIT lost with its node: left to recovery
//! ```
//!
//! Recovery (after each restart, and at the end) lists each node's
//! prepared branches with XA RECOVER and finishes each by the log: COMMIT
//! for Commit(x), ROLLBACK for Abort(x). A Pending(x) branch belongs to a
//! coordinator thread still deciding, and is left alone (rolling it back
//! would race that thread's decision: presumed abort is only safe for
//! transactions no coordinator is running).
//!
//! What must hold at the end: the money on both nodes adds up to what was
//! there at the start, each node's balances equal its initial balances plus
//! its ledger, the ledgers of the two nodes hold the same transfers (every
//! transfer is on both nodes or on neither), those transfers are exactly
//! the ones the log decided to commit, and every acknowledged transfer is
//! among them.

mod common;

use common::client::{Client, SqlError};
use common::{Server, ServerOptions};
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const ACCOUNTS: i64 = 10;
const OPENING: i64 = 1000;
/// Coordinator threads.
const WORKERS: u64 = 3;
/// Kill -9 / restart rounds, alternating between the nodes.
const KILLS: usize = 4;
/// Bound on the wait for a detached branch (its session ends asynchronously
/// after a disconnect) and for progress between kills.
const BOUND: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Pending,
    Commit,
    Abort,
}

/// The coordinator's log: the decision for each transfer, by gtrid. (A real
/// transaction manager writes it durably; the test process is not killed.)
type Log = Arc<Mutex<HashMap<String, Decision>>>;

fn node() -> Server {
    Server::start_with(ServerOptions {
        lock_wait_timeout_secs: Some(1),
        ..ServerOptions::default()
    })
}

fn setup(s: &Server) {
    let mut c = s.client();
    c.exec("CREATE DATABASE bank");
    c.exec("USE bank");
    c.exec("CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)");
    c.exec("CREATE TABLE ledger (xfer VARCHAR(32) PRIMARY KEY, amount BIGINT NOT NULL)");
    let values: Vec<String> = (0..ACCOUNTS).map(|i| format!("({i}, {OPENING})")).collect();
    c.exec(&format!("INSERT INTO acct VALUES {}", values.join(", ")));
}

fn connect(port: u16, password: &str) -> Result<Client, SqlError> {
    let mut c = Client::connect(port, "root", password)?;
    c.query("USE bank")?;
    Ok(c)
}

/// One branch's statements: its account moves by `delta`, its ledger gets
/// the transfer's row.
fn branch_work(
    c: &mut Client,
    gtrid: &str,
    bqual: &str,
    account: i64,
    delta: i64,
) -> Result<(), SqlError> {
    c.query(&format!("XA START '{gtrid}', '{bqual}', 1"))?;
    c.query(&format!(
        "UPDATE acct SET bal = bal + {delta} WHERE id = {account}"
    ))?;
    c.query(&format!("INSERT INTO ledger VALUES ('{gtrid}', {delta})"))?;
    c.query(&format!("XA END '{gtrid}', '{bqual}', 1"))?;
    Ok(())
}

/// What a coordinator thread saw.
#[derive(Default)]
struct Tally {
    acknowledged: Vec<String>,
    /// Errors a transfer may meet while nodes die and restart (lost
    /// connections, lock waits behind recovered branches, distributed
    /// deadlocks ended by lock_wait_timeout) are expected; anything else is
    /// collected here and fails the test.
    unexpected: Vec<String>,
}

/// Whether `e` is an error the kills and the lock waits explain.
fn expected(e: &SqlError) -> bool {
    e.is_connection_error() || matches!(e.errno, 1205 | 1213 | 1614)
}

/// One coordinator thread: transfers until `stop`.
#[allow(clippy::too_many_arguments)]
fn coordinator(
    no: u64,
    ports: [u16; 2],
    passwords: [String; 2],
    log: Log,
    stop: Arc<AtomicBool>,
    acks: Arc<AtomicU64>,
) -> Tally {
    let mut rng = StdRng::seed_from_u64(0x2bc0_u64.wrapping_add(no));
    let mut tally = Tally::default();
    let mut conns: [Option<Client>; 2] = [None, None];
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for i in 0..2 {
            if conns[i].is_none() {
                conns[i] = connect(ports[i], &passwords[i]).ok();
            }
        }
        let (Some(_), Some(_)) = (&conns[0], &conns[1]) else {
            thread::sleep(Duration::from_millis(20));
            continue;
        };
        let gtrid = format!("x{no}-{n}");
        n += 1;
        let from = rng.gen_range(0..2usize);
        let amount: i64 = rng.gen_range(1..50);
        let deltas = if from == 0 {
            [-amount, amount]
        } else {
            [amount, -amount]
        };
        log.lock().insert(gtrid.clone(), Decision::Pending);

        // Phase 1: work and PREPARE on both.
        let mut failed = None;
        for i in 0..2 {
            let c = conns[i].as_mut().expect("connected");
            let bqual = ["a", "b"][i];
            let account = rng.gen_range(0..ACCOUNTS);
            if let Err(e) = branch_work(c, &gtrid, bqual, account, deltas[i]) {
                failed = Some(e);
                break;
            }
        }
        if failed.is_none() {
            for i in 0..2 {
                let c = conns[i].as_mut().expect("connected");
                if let Err(e) = c.query(&format!("XA PREPARE '{gtrid}', '{}', 1", ["a", "b"][i])) {
                    failed = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = failed {
            if !expected(&e) {
                tally.unexpected.push(format!("{gtrid}: {e}"));
            }
            log.lock().insert(gtrid, Decision::Abort);
            // Disconnect both: an unprepared branch rolls back with its
            // session, a prepared one detaches for recovery to roll back.
            conns = [None, None];
            continue;
        }

        // Phase 2: the decision is logged before the first COMMIT is sent.
        log.lock().insert(gtrid.clone(), Decision::Commit);
        let mut both = true;
        for i in 0..2 {
            let c = conns[i].as_mut().expect("connected");
            if let Err(e) = c.query(&format!("XA COMMIT '{gtrid}', '{}', 1", ["a", "b"][i])) {
                if !e.is_connection_error() {
                    tally.unexpected.push(format!("{gtrid} COMMIT: {e}"));
                }
                conns[i] = None;
                both = false;
            }
        }
        if both {
            tally.acknowledged.push(gtrid);
            acks.fetch_add(1, Ordering::Relaxed);
        }
    }
    tally
}

/// Finishes `node`'s prepared branches by the log; returns how many it
/// committed. With `last` (no coordinator running), every branch must be
/// decided and detached: a branch whose session is still ending is waited
/// for.
fn recover(s: &Server, log: &Log, last: bool) -> usize {
    let mut c = s.client();
    let deadline = Instant::now() + BOUND;
    let mut committed = 0;
    loop {
        let mut left = 0;
        for row in c.exec("XA RECOVER").rows() {
            let field = |i: usize| row[i].clone().expect("XA RECOVER has no NULLs");
            let gtrid_len: usize = field(1).parse().expect("gtrid_length");
            let data = field(3);
            let (gtrid, bqual) = data.split_at(gtrid_len);
            let decision = log.lock().get(gtrid).copied();
            let verb = match decision {
                Some(Decision::Commit) => "COMMIT",
                Some(Decision::Abort) => "ROLLBACK",
                Some(Decision::Pending) if !last => continue,
                other => panic!("prepared branch {data} with no decision ({other:?})"),
            };
            match c.query(&format!("XA {verb} '{gtrid}', '{bqual}', 1")) {
                Ok(_) => committed += usize::from(verb == "COMMIT"),
                // Still attached: its session has not ended yet.
                Err(e) if e.errno == 1397 => left += 1,
                Err(e) => panic!("XA {verb} '{gtrid}', '{bqual}': {e}"),
            }
        }
        if !last || left == 0 {
            return committed;
        }
        assert!(
            Instant::now() < deadline,
            "branches stayed attached for {BOUND:?}"
        );
        thread::sleep(Duration::from_millis(50));
    }
}

/// (sum of balances, ledger transfers, sum of ledger amounts) of a node.
fn state(s: &Server) -> (i64, BTreeSet<String>, i64) {
    let mut c = s.client();
    c.exec("USE bank");
    let sum: i64 = c
        .exec("SELECT SUM(bal) FROM acct")
        .scalar()
        .expect("a sum")
        .parse()
        .expect("a number");
    let mut ledger = BTreeSet::new();
    let mut net = 0;
    for row in c.exec("SELECT xfer, amount FROM ledger").rows() {
        ledger.insert(row[0].clone().expect("xfer"));
        net += row[1]
            .as_deref()
            .expect("amount")
            .parse::<i64>()
            .expect("a number");
    }
    (sum, ledger, net)
}

/// The deterministic cases first: a node killed after both PREPAREs with
/// one COMMIT sent (recovery commits the other branch), and a node killed
/// before its PREPARE (its branch is gone; recovery rolls the other back).
#[test]
fn in_doubt_branches_are_finished_by_the_coordinator_after_kill9() {
    let mut nodes = [node(), node()];
    nodes.iter().for_each(setup);
    let log: Log = Arc::default();
    let mut a = connect(nodes[0].port(), nodes[0].password()).expect("node a");
    let mut b = connect(nodes[1].port(), nodes[1].password()).expect("node b");

    // 1. Both prepared, decision Commit, node b dies before its COMMIT.
    log.lock().insert("t1".into(), Decision::Pending);
    branch_work(&mut a, "t1", "a", 0, -100).expect("branch a");
    branch_work(&mut b, "t1", "b", 0, 100).expect("branch b");
    a.exec("XA PREPARE 't1', 'a', 1");
    b.exec("XA PREPARE 't1', 'b', 1");
    log.lock().insert("t1".into(), Decision::Commit);
    a.exec("XA COMMIT 't1', 'a', 1");
    nodes[1].kill9();
    nodes[1].restart();
    let mut b = connect(nodes[1].port(), nodes[1].password()).expect("node b after restart");
    assert_eq!(
        b.exec("XA RECOVER").rows(),
        vec![vec![
            Some("1".into()),
            Some("2".into()),
            Some("1".into()),
            Some("t1b".into())
        ]],
        "the prepared branch came back"
    );
    assert_eq!(recover(&nodes[1], &log, true), 1);
    assert_eq!(
        state(&nodes[0]).0 + state(&nodes[1]).0,
        2 * ACCOUNTS * OPENING
    );
    assert_eq!(state(&nodes[1]).1, BTreeSet::from(["t1".to_string()]));

    // 2. a prepared, b killed before its PREPARE: Abort.
    log.lock().insert("t2".into(), Decision::Pending);
    branch_work(&mut a, "t2", "a", 1, -7).expect("branch a");
    branch_work(&mut b, "t2", "b", 1, 7).expect("branch b");
    a.exec("XA PREPARE 't2', 'a', 1");
    nodes[1].kill9();
    assert!(
        b.query("XA PREPARE 't2', 'b', 1").is_err(),
        "node b is dead"
    );
    log.lock().insert("t2".into(), Decision::Abort);
    drop(a); // node a's prepared branch detaches
    nodes[1].restart();
    assert!(
        nodes[1].client().exec("XA RECOVER").rows().is_empty(),
        "an unprepared branch does not survive its node"
    );
    assert_eq!(recover(&nodes[0], &log, true), 0);
    assert!(nodes[0].client().exec("XA RECOVER").rows().is_empty());
    let (sum_a, ledger_a, _) = state(&nodes[0]);
    let (sum_b, ledger_b, _) = state(&nodes[1]);
    assert_eq!(sum_a + sum_b, 2 * ACCOUNTS * OPENING);
    assert_eq!(ledger_a, ledger_b);
    assert_eq!(ledger_a, BTreeSet::from(["t1".to_string()]));
    for n in &nodes {
        assert!(n.alarms().is_empty(), "{:?}", n.alarms());
    }
}

/// Three coordinator threads transfer across the nodes while the test kills
/// -9 one node, then the other, at random moments; after each restart and
/// at the end the log finishes what was in doubt.
#[test]
fn transfers_across_two_nodes_are_atomic_through_kill9() {
    let mut nodes = [node(), node()];
    nodes.iter().for_each(setup);
    let log: Log = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let acks = Arc::new(AtomicU64::new(0));
    let ports = [nodes[0].port(), nodes[1].port()];
    let passwords = [
        nodes[0].password().to_string(),
        nodes[1].password().to_string(),
    ];
    let workers: Vec<_> = (0..WORKERS)
        .map(|no| {
            let (log, stop, acks, passwords) =
                (log.clone(), stop.clone(), acks.clone(), passwords.clone());
            thread::spawn(move || coordinator(no, ports, passwords, log, stop, acks))
        })
        .collect();

    let mut rng = StdRng::seed_from_u64(24);
    let mut recovered = 0;
    for round in 0..KILLS {
        // Progress first: some transfers acknowledged since the last kill.
        let target = acks.load(Ordering::Relaxed) + rng.gen_range(5..30);
        let deadline = Instant::now() + BOUND;
        while acks.load(Ordering::Relaxed) < target {
            assert!(Instant::now() < deadline, "no progress before kill {round}");
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(Duration::from_millis(rng.gen_range(0..40)));
        let victim = round % 2;
        nodes[victim].kill9();
        thread::sleep(Duration::from_millis(rng.gen_range(0..200)));
        nodes[victim].restart();
        recovered += recover(&nodes[victim], &log, false);
        recovered += recover(&nodes[1 - victim], &log, false);
    }
    stop.store(true, Ordering::Relaxed);
    let tallies: Vec<Tally> = workers
        .into_iter()
        .map(|w| w.join().expect("coordinator thread panicked"))
        .collect();
    recovered += recover(&nodes[0], &log, true) + recover(&nodes[1], &log, true);

    let unexpected: Vec<&String> = tallies.iter().flat_map(|t| &t.unexpected).collect();
    assert!(unexpected.is_empty(), "unexpected errors: {unexpected:?}");
    let (sum_a, ledger_a, net_a) = state(&nodes[0]);
    let (sum_b, ledger_b, net_b) = state(&nodes[1]);
    assert_eq!(sum_a + sum_b, 2 * ACCOUNTS * OPENING, "money is conserved");
    assert_eq!(
        sum_a,
        ACCOUNTS * OPENING + net_a,
        "node a's balances match its ledger"
    );
    assert_eq!(
        sum_b,
        ACCOUNTS * OPENING + net_b,
        "node b's balances match its ledger"
    );
    assert_eq!(
        ledger_a, ledger_b,
        "every transfer is on both nodes or on neither"
    );
    let decided: BTreeSet<String> = log
        .lock()
        .iter()
        .filter(|(_, d)| **d == Decision::Commit)
        .map(|(g, _)| g.clone())
        .collect();
    assert_eq!(
        ledger_a, decided,
        "the committed transfers are the ones decided so"
    );
    let acknowledged: Vec<&String> = tallies.iter().flat_map(|t| &t.acknowledged).collect();
    for g in &acknowledged {
        assert!(
            ledger_a.contains(*g),
            "acknowledged transfer {g} is missing"
        );
    }
    for n in &nodes {
        assert!(n.alarms().is_empty(), "{:?}", n.alarms());
    }
    eprintln!(
        "{} transfers acknowledged, {} committed, {} finished by recovery, {} aborted",
        acknowledged.len(),
        decided.len(),
        recovered,
        log.lock()
            .values()
            .filter(|d| **d == Decision::Abort)
            .count()
    );
}
