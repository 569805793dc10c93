//! XA over the wire, on RocksDB storage: a prepared branch survives its
//! client's disconnect and a kill -9 of the server, keeps its row locks
//! across the restart (a concurrent UPDATE times out with 1205), is listed by
//! XA RECOVER, and is committed from another session, after which its rows
//! are there and the locks gone.

mod common;

use common::client::Client;
use common::{Server, ServerOptions};
use std::time::{Duration, Instant};

fn rows(c: &mut Client, sql: &str) -> Vec<Vec<Option<String>>> {
    c.exec(sql).rows()
}

fn strs(v: &[&str]) -> Vec<Option<String>> {
    v.iter().map(|s| Some(s.to_string())).collect()
}

/// A server on RocksDB (`in_memory` false: what survives kill -9 is the point)
/// or in memory (the tests of one server lifetime).
fn server(in_memory: bool) -> Server {
    Server::start_with(ServerOptions {
        lock_wait_timeout_secs: Some(1),
        in_memory,
        ..ServerOptions::default()
    })
}

fn setup(c: &mut Client) {
    c.exec("CREATE DATABASE xa");
    c.exec("USE xa");
    c.exec("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL, KEY kb (bal))");
    c.exec("INSERT INTO acct VALUES (1, 100), (2, 100)");
}

/// Prepares branch `gtrid` moving 30 from account 1 to account 2.
fn prepare_transfer(c: &mut Client, gtrid: &str) {
    c.exec(&format!("XA START '{gtrid}', 'node1', 7"));
    c.exec("UPDATE acct SET bal = bal - 30 WHERE id = 1");
    c.exec("UPDATE acct SET bal = bal + 30 WHERE id = 2");
    c.exec(&format!("XA END '{gtrid}', 'node1', 7"));
    c.exec(&format!("XA PREPARE '{gtrid}', 'node1', 7"));
}

#[test]
fn prepared_branch_survives_kill9_with_its_locks() {
    let mut s = server(false);
    let mut a = s.client();
    setup(&mut a);
    prepare_transfer(&mut a, "g1");
    // PREPARE returned: the branch is durable. Kill the server under it.
    s.kill9();
    s.restart();

    let mut b = s.client();
    b.exec("USE xa");
    assert_eq!(
        rows(&mut b, "XA RECOVER"),
        vec![strs(&["7", "2", "5", "g1node1"])]
    );
    assert_eq!(
        rows(&mut b, "XA RECOVER CONVERT XID"),
        vec![strs(&["7", "2", "5", "0x67316e6f646531"])]
    );
    // The recovered branch holds its row locks again.
    let t0 = Instant::now();
    let e = b.expect_err("UPDATE acct SET bal = 0 WHERE id = 1");
    assert_eq!(e.errno, 1205, "{e:?}");
    assert!(t0.elapsed() >= Duration::from_millis(500), "it waited");
    assert_eq!(
        rows(&mut b, "SELECT bal FROM acct ORDER BY id"),
        vec![strs(&["100"]), strs(&["100"])],
        "not committed: readers see the old rows"
    );
    // Committed from a session that never saw the branch.
    let mut c = s.client();
    c.exec("XA COMMIT 'g1', 'node1', 7");
    assert!(rows(&mut c, "XA RECOVER").is_empty());
    assert_eq!(
        rows(&mut b, "SELECT bal FROM acct ORDER BY id"),
        vec![strs(&["70"]), strs(&["130"])]
    );
    assert_eq!(
        rows(&mut b, "SELECT id FROM acct WHERE bal = 130"),
        vec![strs(&["2"])],
        "the index entries came with the commit"
    );
    b.exec("UPDATE acct SET bal = bal + 1 WHERE id = 1");
    let e = c.expect_err("XA COMMIT 'g1', 'node1', 7");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1397, "XAE04"));

    // And the commit itself is durable.
    s.kill9();
    s.restart();
    let mut d = s.client();
    assert_eq!(
        rows(&mut d, "SELECT bal FROM xa.acct ORDER BY id"),
        vec![strs(&["71"]), strs(&["130"])]
    );
    assert!(rows(&mut d, "XA RECOVER").is_empty());
    assert!(s.alarms().is_empty(), "{:?}", s.alarms());
}

#[test]
fn prepared_branch_survives_its_client_disconnecting() {
    let s = server(true);
    let mut a = s.client();
    setup(&mut a);
    prepare_transfer(&mut a, "g2");
    let mut b = s.client();
    b.exec("USE xa");
    let e = b.expect_err("XA COMMIT 'g2', 'node1', 7");
    assert_eq!(e.errno, 1397, "still attached to its session: {e:?}");
    drop(a); // the client goes away without a word

    // The session ends asynchronously; then the branch is anyone's.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match b.query("XA ROLLBACK 'g2', 'node1', 7") {
            Ok(_) => break,
            Err(e) if e.errno == 1397 && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("XA ROLLBACK of the detached branch: {e:?}"),
        }
    }
    assert_eq!(
        rows(&mut b, "SELECT bal FROM acct ORDER BY id"),
        vec![strs(&["100"]), strs(&["100"])]
    );
    b.exec("UPDATE acct SET bal = 1 WHERE id = 1");
    assert!(rows(&mut b, "XA RECOVER").is_empty());
}

#[test]
fn xa_errors_carry_mysql_numbers_and_sqlstates() {
    let s = server(true);
    let mut a = s.client();
    setup(&mut a);
    a.exec("XA START 'e'");
    let e = a.expect_err("COMMIT");
    assert_eq!(
        (e.errno, e.sqlstate.as_str(), e.message.as_str()),
        (
            1399,
            "XAE07",
            "XAER_RMFAIL: The command cannot be executed when global transaction is in the  ACTIVE state"
        )
    );
    let mut b = s.client();
    let e = b.expect_err("XA START 'e'");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1440, "XAE08"));
    b.exec("BEGIN");
    let e = b.expect_err("XA START 'f'");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1400, "XAE09"));
    a.exec("XA END 'e'");
    a.exec("XA COMMIT 'e' ONE PHASE");
    assert_eq!(
        rows(
            &mut a,
            "SELECT XA FROM information_schema.ENGINES WHERE ENGINE = 'InnoDB'"
        ),
        vec![strs(&["YES"])]
    );
}
