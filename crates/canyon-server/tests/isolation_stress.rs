//! Concurrency tests of issue 24 over the wire: many clients, real
//! transactions, an invariant checked at the end.
//! - "Check, then insert" under REPEATABLE READ: each client reads `k = r`
//!   with FOR UPDATE and inserts a row with `k = r` only when none is there;
//!   `k` has no unique index, so only the range locks keep it unique (without
//!   them two clients both see nothing and both insert).
//! - Transfers with SERIALIZABLE audits: transfers move money between
//!   accounts under REPEATABLE READ; auditors at SERIALIZABLE read every
//!   balance in a transaction and must always see the same total.

mod common;

use common::client::Client;
use common::Server;
use std::sync::atomic::{AtomicU64, Ordering};

const CLIENTS: usize = 6;
const ROUNDS: u64 = 40;

/// Runs `f` in a transaction, again after a deadlock (1213) or a lock wait
/// timeout (1205); `f` returns an error number to retry on.
fn retrying(c: &mut Client, f: &mut dyn FnMut(&mut Client) -> Result<(), u16>) -> u64 {
    let mut retries = 0;
    loop {
        c.exec("BEGIN");
        match f(c) {
            Ok(()) => {
                c.exec("COMMIT");
                return retries;
            }
            Err(1213 | 1205) => {
                c.exec("ROLLBACK");
                retries += 1;
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
}

#[test]
fn check_then_insert_never_duplicates() {
    let server = Server::start();
    let mut admin = server.client();
    admin.exec("CREATE DATABASE s");
    admin.exec(
        "CREATE TABLE s.t (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL, who INT, KEY (k))",
    );
    let retries = AtomicU64::new(0);
    std::thread::scope(|sc| {
        for who in 0..CLIENTS {
            let (server, retries) = (&server, &retries);
            sc.spawn(move || {
                let mut c = server.client();
                c.exec("USE s");
                c.exec("SET SESSION innodb_lock_wait_timeout = 5");
                for r in 0..ROUNDS {
                    let n = retrying(&mut c, &mut |c| {
                        let found = c
                            .query(&format!("SELECT id FROM t WHERE k = {r} FOR UPDATE"))
                            .map_err(|e| e.errno)?
                            .rows();
                        if found.is_empty() {
                            c.query(&format!("INSERT INTO t (k, who) VALUES ({r}, {who})"))
                                .map_err(|e| e.errno)?;
                        }
                        Ok(())
                    });
                    retries.fetch_add(n, Ordering::Relaxed);
                }
            });
        }
    });
    let dups = admin
        .exec("SELECT k, COUNT(*) FROM s.t GROUP BY k HAVING COUNT(*) > 1")
        .rows();
    assert!(dups.is_empty(), "duplicates: {dups:?}");
    let n = admin.exec("SELECT COUNT(*) FROM s.t").scalar();
    assert_eq!(n.as_deref(), Some(ROUNDS.to_string().as_str()));
    eprintln!(
        "check-then-insert: {CLIENTS} clients x {ROUNDS} rounds, {} retries after 1213/1205",
        retries.load(Ordering::Relaxed)
    );
}

#[test]
fn serializable_audits_see_a_constant_total_under_transfers() {
    const ACCOUNTS: u64 = 10;
    const TOTAL: u64 = ACCOUNTS * 1000;
    let server = Server::start();
    let mut admin = server.client();
    admin.exec("CREATE DATABASE b");
    admin.exec("CREATE TABLE b.acc (id INT PRIMARY KEY, bal INT NOT NULL)");
    let values: Vec<String> = (0..ACCOUNTS).map(|i| format!("({i}, 1000)")).collect();
    admin.exec(&format!("INSERT INTO b.acc VALUES {}", values.join(", ")));
    let audits = AtomicU64::new(0);
    std::thread::scope(|sc| {
        for w in 0..CLIENTS as u64 {
            let server = &server;
            sc.spawn(move || {
                let mut c = server.client();
                c.exec("USE b");
                c.exec("SET SESSION innodb_lock_wait_timeout = 5");
                for r in 0..ROUNDS {
                    let (from, to) = ((w + r) % ACCOUNTS, (w * 3 + r * 7 + 1) % ACCOUNTS);
                    if from == to {
                        continue;
                    }
                    retrying(&mut c, &mut |c| {
                        for id in [from.min(to), from.max(to)] {
                            c.query(&format!("SELECT bal FROM acc WHERE id = {id} FOR UPDATE"))
                                .map_err(|e| e.errno)?;
                        }
                        c.query(&format!("UPDATE acc SET bal = bal - 7 WHERE id = {from}"))
                            .map_err(|e| e.errno)?;
                        c.query(&format!("UPDATE acc SET bal = bal + 7 WHERE id = {to}"))
                            .map_err(|e| e.errno)?;
                        Ok(())
                    });
                }
            });
        }
        for _ in 0..2 {
            let (server, audits) = (&server, &audits);
            sc.spawn(move || {
                let mut c = server.client();
                c.exec("USE b");
                c.exec("SET SESSION innodb_lock_wait_timeout = 5");
                c.exec("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE");
                for _ in 0..ROUNDS {
                    retrying(&mut c, &mut |c| {
                        // Two reads in one transaction: each sees the total.
                        for sql in [
                            "SELECT SUM(bal) FROM acc",
                            "SELECT SUM(bal) FROM acc WHERE id < 5",
                        ] {
                            let first = c.query(sql).map_err(|e| e.errno)?.scalar();
                            if sql.ends_with("acc") {
                                assert_eq!(first.as_deref(), Some(TOTAL.to_string().as_str()));
                            }
                        }
                        let rows = c.query("SELECT bal FROM acc").map_err(|e| e.errno)?.rows();
                        let sum: u64 = rows
                            .iter()
                            .map(|r| r[0].as_deref().unwrap_or("0").parse::<u64>().unwrap())
                            .sum();
                        assert_eq!(sum, TOTAL, "a SERIALIZABLE audit saw money move");
                        audits.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    });
                }
            });
        }
    });
    assert_eq!(audits.load(Ordering::Relaxed), 2 * ROUNDS);
    let total = admin.exec("SELECT SUM(bal) FROM b.acc").scalar();
    assert_eq!(total.as_deref(), Some(TOTAL.to_string().as_str()));
}
