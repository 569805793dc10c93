//! Crash consistency: SIGKILL a Canyon server (real RocksDB storage, default
//! durability `sync-every-commit`) at seeded random moments while 8 clients commit,
//! restart it on the same data directory, and check what survived.
//!
//! The method is the one RocksDB's crash test and SQLite's crash VFS use: a
//! harness process that is never killed keeps a ledger of every transaction:
//!
//! ```text
//!   sent BEGIN/INSERTs ──(COMMIT not sent, or an error before it)──> aborted
//!          │
//!          └── COMMIT sent ──(OK received)──────────────────────────> acknowledged
//!                          └─(connection lost before the reply)─────> in doubt
//! ```
//!
//! Transaction `n` inserts rows `3n`, `3n+1`, `3n+2`, each naming `n`. After the
//! last restart the table must satisfy:
//!
//! 1. every acknowledged transaction's rows are present, each exactly once;
//! 2. every transaction's rows are all present or all absent (count 0 or 3);
//! 3. present ⊆ acknowledged ∪ in doubt: no aborted transaction and nothing that
//!    was never sent is present;
//! 4. rows are internally consistent (`id / 3 == txn`), and a secondary-index
//!    lookup by `txn` agrees with the table.
//!
//! The kill schedule depends on progress (a random number of further
//! acknowledgements, then a random short delay), never on elapsed time alone, so
//! every round kills a server that is busy committing. Set CANYON_CRASH_SEED to
//! replay another schedule.

mod common;

use common::client::{Client, SqlError};
use common::Server;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const CLIENTS: u64 = 8;
const KILLS: usize = 5;
const ROWS_PER_TXN: u64 = 3;
const DEFAULT_SEED: u64 = 0x00c4_a5e5_eed5;

/// The longest a round may wait for the clients to make progress. A bound so
/// that a hung server fails the test instead of hanging it; not a timing check.
const PROGRESS_BOUND: Duration = Duration::from_secs(120);

/// What one client knows about the transactions it ran.
#[derive(Default)]
struct Ledger {
    acknowledged: Vec<u64>,
    in_doubt: Vec<u64>,
    aborted: Vec<u64>,
    /// Errors that were not a lost connection: none are expected (ids are unique,
    /// so there is no contention).
    unexpected: Vec<String>,
}

enum Outcome {
    Acknowledged,
    InDoubt,
    /// Rolled back or never committed; `Some` when the connection is unusable.
    Aborted(Option<SqlError>),
}

/// Runs transaction `txn` on `c`.
fn run_txn(c: &mut Client, client_no: u64, txn: u64, unexpected: &mut Vec<String>) -> Outcome {
    let mut step = |c: &mut Client, sql: &str| -> Result<(), SqlError> {
        match c.query(sql) {
            Ok(_) => Ok(()),
            Err(e) => {
                if !e.is_connection_error() {
                    unexpected.push(format!("{sql}: {e}"));
                }
                Err(e)
            }
        }
    };
    let mut body = vec!["BEGIN".to_string()];
    for j in 0..ROWS_PER_TXN {
        body.push(format!(
            "INSERT INTO t (id, txn, writer, pad) VALUES ({}, {txn}, {client_no}, 'row {j} of transaction {txn}')",
            txn * ROWS_PER_TXN + j
        ));
    }
    for sql in &body {
        if let Err(e) = step(c, sql) {
            if e.is_connection_error() {
                return Outcome::Aborted(Some(e));
            }
            let _ = c.query("ROLLBACK");
            return Outcome::Aborted(None);
        }
    }
    match c.query("COMMIT") {
        Ok(_) => Outcome::Acknowledged,
        // The COMMIT may or may not have been applied before the kill.
        Err(e) if e.is_connection_error() => Outcome::InDoubt,
        Err(e) => {
            unexpected.push(format!("COMMIT: {e}"));
            Outcome::Aborted(None)
        }
    }
}

/// One client thread: commits numbered transactions until `stop`, reconnecting
/// whenever the connection breaks.
fn client_loop(
    port: u16,
    password: String,
    client_no: u64,
    stop: Arc<AtomicBool>,
    acks: Arc<AtomicU64>,
) -> Ledger {
    let mut ledger = Ledger::default();
    let mut conn: Option<Client> = None;
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let Some(c) = conn.as_mut() else {
            match Client::connect(port, "root", &password) {
                Ok(mut c) => {
                    if c.query("USE crash").is_ok() {
                        conn = Some(c);
                    }
                }
                Err(_) => thread::sleep(Duration::from_millis(20)),
            }
            continue;
        };
        let txn = (client_no + 1) * 100_000_000 + n;
        n += 1;
        match run_txn(c, client_no, txn, &mut ledger.unexpected) {
            Outcome::Acknowledged => {
                ledger.acknowledged.push(txn);
                acks.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::InDoubt => {
                ledger.in_doubt.push(txn);
                conn = None;
            }
            Outcome::Aborted(lost) => {
                ledger.aborted.push(txn);
                if lost.is_some() {
                    conn = None;
                }
            }
        }
    }
    ledger
}

/// Waits until `acks` reaches `target`; panics after [`PROGRESS_BOUND`].
fn wait_for_acks(acks: &AtomicU64, target: u64, server: &Server) {
    let deadline = Instant::now() + PROGRESS_BOUND;
    while acks.load(Ordering::Relaxed) < target {
        assert!(
            Instant::now() < deadline,
            "clients made no progress: {} of {target} commits acknowledged after {PROGRESS_BOUND:?}\n{}",
            acks.load(Ordering::Relaxed),
            server.log_tail()
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// Every row: (id, txn).
fn all_rows(server: &Server) -> Vec<(u64, u64)> {
    let mut c = server.client();
    c.exec("USE crash");
    let rows = c.exec("SELECT id, txn FROM t ORDER BY id").rows();
    let count: usize = c
        .exec("SELECT COUNT(*) FROM t")
        .scalar()
        .and_then(|v| v.parse().ok())
        .expect("COUNT(*) is a number");
    assert_eq!(count, rows.len(), "COUNT(*) disagrees with a full scan");
    rows.into_iter()
        .map(|r| {
            let num = |v: &Option<String>| -> u64 {
                v.as_deref()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| panic!("bad row {r:?}"))
            };
            (num(&r[0]), num(&r[1]))
        })
        .collect()
}

#[test]
fn kill9_during_commits_loses_no_acknowledged_transaction() {
    let seed = std::env::var("CANYON_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    eprintln!("crash test seed: {seed} (set CANYON_CRASH_SEED to change it)");
    let mut rng = StdRng::seed_from_u64(seed);

    let mut server = Server::start();
    {
        let mut c = server.client();
        c.exec("CREATE DATABASE crash");
        c.exec("USE crash");
        c.exec(
            "CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, txn BIGINT NOT NULL, \
             writer INT NOT NULL, pad VARCHAR(64) NOT NULL, KEY k_txn (txn))",
        );
    }

    let stop = Arc::new(AtomicBool::new(false));
    let acks = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (port, pw) = (server.port(), server.password().to_string());
            let (stop, acks) = (Arc::clone(&stop), Arc::clone(&acks));
            thread::spawn(move || client_loop(port, pw, i, stop, acks))
        })
        .collect();

    for round in 1..=KILLS {
        let target = acks.load(Ordering::Relaxed) + rng.gen_range(50..400);
        wait_for_acks(&acks, target, &server);
        thread::sleep(Duration::from_millis(rng.gen_range(0..100)));
        let before = acks.load(Ordering::Relaxed);
        server.kill9();
        eprintln!("round {round}: SIGKILL after {before} acknowledged commits");
        thread::sleep(Duration::from_millis(rng.gen_range(0..300)));
        server.restart();
    }
    // The server must take commits again after the last recovery.
    let target = acks.load(Ordering::Relaxed) + 20;
    wait_for_acks(&acks, target, &server);
    stop.store(true, Ordering::Relaxed);

    let mut acknowledged = HashSet::new();
    let mut in_doubt = HashSet::new();
    let mut aborted = HashSet::new();
    let mut unexpected = Vec::new();
    for h in handles {
        let l = h.join().expect("client thread panicked");
        acknowledged.extend(l.acknowledged);
        in_doubt.extend(l.in_doubt);
        aborted.extend(l.aborted);
        unexpected.extend(l.unexpected);
    }
    eprintln!(
        "{} acknowledged, {} in doubt, {} aborted transactions",
        acknowledged.len(),
        in_doubt.len(),
        aborted.len()
    );
    assert!(
        unexpected.is_empty(),
        "errors other than a lost connection: {unexpected:#?}"
    );

    // One more crash with no client running: the final state must survive it too.
    let before = all_rows(&server);
    server.kill9();
    server.restart();
    let rows = all_rows(&server);
    assert_eq!(
        before.len(),
        rows.len(),
        "rows changed across a kill with no client running"
    );
    assert!(
        before == rows,
        "rows changed across a kill with no client running"
    );

    let mut by_txn: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut ids = HashSet::new();
    for &(id, txn) in &rows {
        assert!(ids.insert(id), "row id {id} is present more than once");
        assert_eq!(id / ROWS_PER_TXN, txn, "row {id} names transaction {txn}");
        by_txn.entry(txn).or_default().push(id);
    }
    let mut problems = Vec::new();
    for (txn, ids) in &by_txn {
        if ids.len() as u64 != ROWS_PER_TXN {
            problems.push(format!(
                "transaction {txn} is torn: {} of {ROWS_PER_TXN} rows present ({ids:?})",
                ids.len()
            ));
        }
        if !acknowledged.contains(txn) && !in_doubt.contains(txn) {
            let what = if aborted.contains(txn) {
                "aborted (COMMIT never sent or refused)"
            } else {
                "never sent"
            };
            problems.push(format!("transaction {txn} is present but was {what}"));
        }
    }
    for txn in &acknowledged {
        if !by_txn.contains_key(txn) {
            problems.push(format!("acknowledged transaction {txn} is missing"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems (showing up to 50):\n{}",
        problems.len(),
        problems
            .iter()
            .take(50)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );

    eprintln!(
        "{} of {} in-doubt transactions were committed",
        in_doubt.iter().filter(|t| by_txn.contains_key(t)).count(),
        in_doubt.len()
    );

    // The secondary index agrees with the table for a sample of transactions.
    let mut c = server.client();
    c.exec("USE crash");
    let mut sample: Vec<u64> = acknowledged.iter().copied().collect();
    sample.sort_unstable();
    let absent: Vec<u64> = aborted.iter().copied().take(20).collect();
    for &txn in sample
        .iter()
        .step_by((sample.len() / 50).max(1))
        .chain(&absent)
    {
        let got = c
            .exec(&format!("SELECT COUNT(*) FROM t WHERE txn = {txn}"))
            .scalar();
        let want = if by_txn.contains_key(&txn) { "3" } else { "0" };
        assert_eq!(
            got.as_deref(),
            Some(want),
            "index lookup of transaction {txn}"
        );
    }
    assert!(
        !acknowledged.is_empty(),
        "no transaction was acknowledged, nothing was tested"
    );
}

/// Crash safety of a table rewrite (`canyon-sql`'s `ddl/rewrite.rs`): SIGKILL
/// the server at seeded random moments while an ALTER copies a table (and
/// once more right after one returns); after each restart the table is
/// whole — all rows, the values intact, its index agreeing with it — and has
/// either the old definition or the new one, never a mix.
#[test]
fn kill9_during_a_table_rewrite_leaves_one_whole_table() {
    const ROWS: u64 = 20_000;
    let mut rng = StdRng::seed_from_u64(DEFAULT_SEED ^ 0x7e3);
    let mut server = Server::start();
    {
        let mut c = server.client();
        c.exec("CREATE DATABASE rw");
        c.exec("USE rw");
        c.exec("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v INT NOT NULL, KEY kv (v))");
        for start in (0..ROWS).step_by(1000) {
            let values: Vec<String> = (start..start + 1000)
                .map(|i| format!("({i}, {})", i % 101))
                .collect();
            c.exec(&format!("INSERT INTO t VALUES {}", values.join(",")));
        }
    }
    let check = |server: &Server, round: usize| -> String {
        let mut c = server.client();
        c.exec("USE rw");
        let row = c
            .exec("SELECT COUNT(*), SUM(id), SUM(v) FROM t")
            .rows()
            .remove(0);
        let expect_v: u64 = (0..ROWS).map(|i| i % 101).sum();
        assert_eq!(
            row,
            [
                Some(ROWS.to_string()),
                Some((ROWS * (ROWS - 1) / 2).to_string()),
                Some(expect_v.to_string())
            ],
            "round {round}: the table is not whole\n{}",
            server.log_tail()
        );
        let via_index = c.exec("SELECT COUNT(*) FROM t WHERE v = 7").scalar();
        let via_scan = c.exec("SELECT COUNT(*) FROM t WHERE v + 0 = 7").scalar();
        assert_eq!(
            via_index, via_scan,
            "round {round}: index and table disagree"
        );
        c.exec(
            "SELECT COLUMN_TYPE FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'rw' AND TABLE_NAME = 't' AND COLUMN_NAME = 'v'",
        )
        .scalar()
        .unwrap_or_default()
    };
    let forms = [
        "ALTER TABLE t MODIFY v BIGINT UNSIGNED NOT NULL",
        "ALTER TABLE t MODIFY v INT NOT NULL",
    ];
    // How long one rewrite takes here, so the kills land inside the copy.
    let took = {
        let mut c = server.client();
        c.exec("USE rw");
        c.exec(forms[0]);
        let t0 = Instant::now();
        c.exec(forms[1]);
        t0.elapsed().as_millis().max(10) as u64
    };
    eprintln!("one rewrite of {ROWS} rows takes {took} ms");
    let mut types = HashSet::new();
    for round in 0..6 {
        let sql = forms[round % 2];
        // Connected before the kill's timer starts: a kill during the
        // handshake would only fail the connect, not test the rewrite.
        let mut c = server.client();
        c.exec("USE rw");
        let alter = thread::spawn(move || c.query(sql).is_ok());
        let finished = if round == 5 {
            // The last round lets the ALTER finish, then kills at once.
            let ok = alter.join().expect("ALTER thread");
            assert!(ok, "the last ALTER failed");
            server.kill9();
            ok
        } else {
            thread::sleep(Duration::from_millis(rng.gen_range(0..took + took / 4)));
            server.kill9();
            alter.join().expect("ALTER thread")
        };
        server.restart();
        let ty = check(&server, round);
        eprintln!("round {round}: `{sql}` finished before the kill: {finished}; v is {ty}");
        if finished {
            let want = if round % 2 == 0 {
                "bigint unsigned"
            } else {
                "int"
            };
            assert_eq!(ty, want, "round {round}: an acknowledged ALTER was lost");
        }
        types.insert(ty);
    }
    assert!(types.len() <= 2, "unexpected column types: {types:?}");
}
