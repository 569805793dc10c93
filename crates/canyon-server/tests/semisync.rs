//! Semi-synchronous replication (issue 25, item 6): a COMMIT is answered
//! only once a replica acknowledged it.
//!
//! - `canyon_replica_acknowledges_and_the_source_falls_back`: a Canyon
//!   replica acknowledges each transaction once applied and durable, so
//!   every row a source's COMMIT returned for is already readable on the
//!   replica (an asynchronous replica would lag and fail the check); DDL
//!   too. With the replica stopped a commit waits out
//!   `rpl_semi_sync_source_timeout`, the source turns asynchronous (status
//!   OFF, `no_times`, a warning in its log), and turns back on once the
//!   restarted replica has caught up. Variables and status under MySQL 8's
//!   and MariaDB's names.
//! - `kill9_of_the_source_loses_no_acknowledged_commit`: four clients
//!   commit under semi-sync and record each acknowledged commit; the source
//!   is killed -9 mid-load. Every acknowledged row is on the semi-sync
//!   replica, which is promoted (STOP REPLICA, RESET REPLICA ALL) and takes
//!   writes. A second, asynchronous replica that had stopped half way is
//!   re-pointed at it by auto-position and gets the old source's missing
//!   transactions from it, under the old source's GTIDs (the promoted
//!   replica logged them as such): both end with equal `gtid_executed` and
//!   rows.
//! - `a_malformed_acknowledgement_ends_only_that_dump`: a raw semi-sync
//!   dump whose "replica" writes garbage where an acknowledgement belongs
//!   is disconnected; the source keeps serving, its other sessions commit,
//!   and the client count returns to 0.
//! - `mariadb_replica_acknowledges`: a stock MariaDB 10.11 replica with
//!   `rpl_semi_sync_slave_enabled` acknowledges Canyon's transactions
//!   (yes_tx counts them, none falls back) and ends with the same rows.

mod common;

use common::client::Client;
use common::{row_field as field, skip_without, vertical_row, Mariadb, Server, ServerOptions};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long anything asynchronous may take on a loaded 2-core machine.
const PATIENCE: Duration = Duration::from_secs(120);

fn server(id: u32) -> Server {
    Server::start_with(ServerOptions {
        extra_toml: format!("log_bin = true\nserver_id = {id}\n"),
        ..ServerOptions::default()
    })
}

fn scalar(c: &mut Client, sql: &str) -> String {
    c.exec(sql).scalar().unwrap_or_default()
}

/// SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%' as a map.
fn semi_status(c: &mut Client) -> HashMap<String, String> {
    c.exec("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'")
        .rows()
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default(),
            )
        })
        .collect()
}

fn stat(c: &mut Client, name: &str) -> u64 {
    semi_status(c)
        .get(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("status {name} missing or not a number"))
}

/// Polls `cond` until it holds; panics with `what` after [`PATIENCE`].
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The source's schema and replication account, and semi-sync on with a
/// timeout long enough never to pass in a healthy run.
fn setup_source(s: &Server) {
    let mut c = s.client();
    c.exec("CREATE DATABASE app");
    c.exec("CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20))");
    // Not logged: the account is the source's own (and MariaDB replicas
    // do not parse MySQL 8's IDENTIFIED WITH ... BY).
    c.exec("SET sql_log_bin = 0");
    c.exec("CREATE USER repl IDENTIFIED WITH mysql_native_password BY 'replpw'");
    c.exec("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO repl");
    c.exec("SET sql_log_bin = 1");
    c.exec("SET GLOBAL rpl_semi_sync_source_timeout = 600000");
    c.exec("SET GLOBAL rpl_semi_sync_source_enabled = ON");
}

fn start_replica(r: &Server, source_port: u16) {
    let mut c = r.client();
    c.exec("SET GLOBAL rpl_semi_sync_replica_enabled = 1");
    point_at(&mut c, source_port);
}

/// CHANGE REPLICATION SOURCE TO `source_port` with auto-position, START.
fn point_at(c: &mut Client, source_port: u16) {
    c.exec(&format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = {source_port}, \
         SOURCE_USER = 'repl', SOURCE_PASSWORD = 'replpw', SOURCE_AUTO_POSITION = 1, \
         SOURCE_CONNECT_RETRY = 1, SOURCE_HEARTBEAT_PERIOD = 1"
    ));
    c.exec("START REPLICA");
}

#[test]
fn canyon_replica_acknowledges_and_the_source_falls_back() {
    if skip_without("mariadb") {
        return;
    }
    let source = server(1);
    setup_source(&source);
    let replica = server(2);
    start_replica(&replica, source.port());
    let mut s = source.client();
    let mut r = replica.client();
    wait_for("the replica to connect semi-synchronously", || {
        stat(&mut s, "Rpl_semi_sync_source_clients") == 1
    });
    let st = semi_status(&mut s);
    assert_eq!(st["Rpl_semi_sync_source_status"], "ON", "{st:?}");
    assert_eq!(st["Rpl_semi_sync_master_status"], "ON", "{st:?}");
    assert_eq!(
        semi_status(&mut r)["Rpl_semi_sync_replica_status"],
        "ON",
        "the replica says it acknowledges"
    );
    // MariaDB's names are aliases of MySQL 8's.
    assert_eq!(
        scalar(&mut s, "SELECT @@rpl_semi_sync_master_enabled"),
        "ON"
    );
    assert_eq!(
        scalar(&mut s, "SELECT @@global.rpl_semi_sync_master_timeout"),
        "600000"
    );
    assert_eq!(
        scalar(&mut s, "SELECT @@rpl_semi_sync_source_wait_point"),
        "AFTER_SYNC"
    );
    let e = s.expect_err("SET GLOBAL rpl_semi_sync_source_wait_for_replica_count = 0");
    assert_eq!(e.errno, 1231, "{e:?}");
    let e = s.expect_err("SET SESSION rpl_semi_sync_source_enabled = 1");
    assert_eq!(e.errno, 1229, "{e:?}");

    // Every acknowledged commit is already on the replica: no polling.
    let yes_before = stat(&mut s, "Rpl_semi_sync_source_yes_tx");
    for i in 1..=30 {
        s.exec(&format!("INSERT INTO app.t VALUES ({i}, 'v{i}')"));
        assert_eq!(
            scalar(
                &mut r,
                &format!("SELECT COUNT(*) FROM app.t WHERE id = {i}")
            ),
            "1",
            "row {i} acknowledged but not on the replica"
        );
    }
    s.exec("BEGIN");
    s.exec("UPDATE app.t SET v = 'multi' WHERE id <= 10");
    s.exec("DELETE FROM app.t WHERE id = 30");
    s.exec("COMMIT");
    assert_eq!(
        scalar(&mut r, "SELECT COUNT(*) FROM app.t WHERE v = 'multi'"),
        "10"
    );
    s.exec("CREATE TABLE app.u (id INT PRIMARY KEY)");
    assert_eq!(
        scalar(
            &mut r,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'app' \
             AND table_name = 'u'"
        ),
        "1",
        "DDL acknowledged but not on the replica"
    );
    let st = semi_status(&mut s);
    let yes: u64 = st["Rpl_semi_sync_source_yes_tx"].parse().expect("a count");
    assert!(yes >= yes_before + 32, "{st:?}");
    assert_eq!(st["Rpl_semi_sync_source_no_tx"], "0", "{st:?}");
    assert_eq!(st["Rpl_semi_sync_source_no_times"], "0", "{st:?}");

    // The replica stops: the next commit waits out the timeout and the
    // source turns asynchronous; the one after does not wait.
    r.exec("STOP REPLICA");
    wait_for("the replica to leave", || {
        stat(&mut s, "Rpl_semi_sync_source_clients") == 0
    });
    s.exec("SET GLOBAL rpl_semi_sync_source_timeout = 300");
    s.exec("INSERT INTO app.t VALUES (100, 'unacknowledged')");
    let st = semi_status(&mut s);
    assert_eq!(st["Rpl_semi_sync_source_status"], "OFF", "{st:?}");
    assert_eq!(st["Rpl_semi_sync_source_no_times"], "1", "{st:?}");
    s.exec("INSERT INTO app.t VALUES (101, 'asynchronous')");
    let st = semi_status(&mut s);
    assert_eq!(st["Rpl_semi_sync_source_no_tx"], "2", "{st:?}");
    assert_eq!(st["Rpl_semi_sync_source_no_times"], "1", "{st:?}");
    assert!(
        source
            .log_tail()
            .contains("semi-synchronous replication switched OFF"),
        "the fallback is logged:\n{}",
        source.log_tail()
    );

    // Back: once the replica has acknowledged what the source waited for,
    // commits wait again and land on the replica before they return.
    s.exec("SET GLOBAL rpl_semi_sync_source_timeout = 600000");
    r.exec("START REPLICA");
    wait_for("the source to turn semi-synchronous again", || {
        semi_status(&mut s)["Rpl_semi_sync_source_status"] == "ON"
    });
    s.exec("INSERT INTO app.t VALUES (102, 'back')");
    assert_eq!(
        scalar(&mut r, "SELECT COUNT(*) FROM app.t WHERE id >= 100"),
        "3"
    );
    // Turned off, commits do not wait and are counted as not acknowledged.
    s.exec("SET GLOBAL rpl_semi_sync_source_enabled = 0");
    let no_before = stat(&mut s, "Rpl_semi_sync_source_no_tx");
    s.exec("INSERT INTO app.t VALUES (103, 'off')");
    assert_eq!(stat(&mut s, "Rpl_semi_sync_source_no_tx"), no_before);
    assert_eq!(semi_status(&mut s)["Rpl_semi_sync_source_status"], "OFF");
    assert!(source.alarms().is_empty(), "{:?}", source.alarms());
    assert!(replica.alarms().is_empty(), "{:?}", replica.alarms());
}

/// Commits single-row inserts of ids `first, first + step, ...` until
/// `stop`, recording each one the source acknowledged (its COMMIT
/// returned OK).
fn committer(
    port: u16,
    password: String,
    first: u64,
    step: u64,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<u64>>>,
) {
    let Ok(mut c) = Client::connect(port, "root", &password) else {
        return;
    };
    let mut id = first;
    while !stop.load(Ordering::Relaxed) {
        match c.query(&format!("INSERT INTO app.t VALUES ({id}, 'load')")) {
            Ok(_) => acked.lock().expect("not poisoned").push(id),
            Err(_) => return,
        }
        id += step;
    }
}

#[test]
fn kill9_of_the_source_loses_no_acknowledged_commit() {
    if skip_without("mariadb") {
        return;
    }
    let mut source = server(1);
    setup_source(&source);
    let replica = server(2);
    start_replica(&replica, source.port());
    let other = server(3);
    let mut o = other.client();
    point_at(&mut o, source.port());
    let mut s = source.client();
    wait_for("the replica to connect semi-synchronously", || {
        stat(&mut s, "Rpl_semi_sync_source_clients") == 1
    });
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let (port, pw) = (source.port(), source.password().to_string());
            let (stop, acked) = (stop.clone(), acked.clone());
            std::thread::spawn(move || committer(port, pw, 1000 + i, 4, stop, acked))
        })
        .collect();
    wait_for("some acknowledged commits", || {
        acked.lock().expect("not poisoned").len() >= 100
    });
    // The asynchronous replica stops half way: it will lack the rest.
    o.exec("STOP REPLICA");
    wait_for("more acknowledged commits", || {
        acked.lock().expect("not poisoned").len() >= 250
    });
    // Mid-load: commits are in flight, some written but not acknowledged.
    let source_uuid = scalar(&mut s, "SELECT @@server_uuid");
    source.kill9();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().expect("committer");
    }
    let acked = acked.lock().expect("not poisoned").clone();
    let mut r = replica.client();
    let have: std::collections::HashSet<u64> = r
        .exec("SELECT id FROM app.t")
        .rows()
        .into_iter()
        .filter_map(|row| row[0].as_deref().and_then(|v| v.parse().ok()))
        .collect();
    let lost: Vec<u64> = acked
        .iter()
        .copied()
        .filter(|id| !have.contains(id))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged commits are not on the replica: {:?}",
        lost.len(),
        acked.len(),
        &lost[..lost.len().min(20)]
    );
    // Failover: the replica becomes the primary and takes writes.
    r.exec("STOP REPLICA");
    r.exec("RESET REPLICA ALL");
    let st = vertical_row(replica.port(), replica.password(), "SHOW REPLICA STATUS");
    assert!(
        st.is_empty(),
        "no source configured after RESET ALL: {st:?}"
    );
    r.exec("INSERT INTO app.t VALUES (1, 'after failover')");
    assert_eq!(
        scalar(&mut r, "SELECT v FROM app.t WHERE id = 1"),
        "after failover"
    );

    // The other replica re-points at the new primary.
    r.exec("SET sql_log_bin = 0");
    r.exec("CREATE USER repl IDENTIFIED WITH mysql_native_password BY 'replpw'");
    r.exec("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO repl");
    r.exec("SET sql_log_bin = 1");
    let count = |c: &mut Client| -> u64 {
        scalar(c, "SELECT COUNT(*) FROM app.t")
            .parse()
            .expect("a count")
    };
    let (behind, ahead) = (count(&mut o), count(&mut r));
    assert!(
        behind < ahead,
        "the stopped replica lags: {behind} vs {ahead}"
    );
    o.exec("RESET REPLICA ALL");
    point_at(&mut o, replica.port());
    let want = scalar(&mut r, "SELECT @@gtid_executed");
    let start = Instant::now();
    while scalar(&mut o, "SELECT @@gtid_executed") != want {
        let st = vertical_row(other.port(), other.password(), "SHOW REPLICA STATUS");
        assert!(
            field(&st, "Last_SQL_Errno") == "0"
                && field(&st, "Last_IO_Errno") == "0"
                && start.elapsed() < PATIENCE,
            "the re-pointed replica did not catch up with {want}: {st:?}\n{}",
            other.log_tail()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let rows = "SELECT GROUP_CONCAT(id, v ORDER BY id) FROM app.t";
    assert_eq!(scalar(&mut o, rows), scalar(&mut r, rows));
    assert!(
        want.contains(&source_uuid),
        "the old source's GTIDs are kept: {want}"
    );
    assert!(replica.alarms().is_empty(), "{:?}", replica.alarms());
    assert!(other.alarms().is_empty(), "{:?}", other.alarms());
}

#[test]
fn mariadb_replica_acknowledges() {
    let Some(m) = Mariadb::start_with(&[
        "--server-id=2",
        "--skip-slave-start",
        "--rpl-semi-sync-slave-enabled=ON",
    ]) else {
        return;
    };
    let source = Server::start_with(ServerOptions {
        extra_toml: "log_bin = true\nserver_id = 7\npresentation = \"mariadb\"\n".into(),
        ..ServerOptions::default()
    });
    setup_source(&source);
    let mut s = source.client();
    let mut r = m.client();
    r.exec(&format!(
        "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {}, MASTER_USER = 'repl', \
         MASTER_PASSWORD = 'replpw', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1",
        source.port()
    ));
    r.exec("START SLAVE");
    wait_for("MariaDB to connect semi-synchronously", || {
        stat(&mut s, "Rpl_semi_sync_master_clients") == 1
    });
    let yes_before = stat(&mut s, "Rpl_semi_sync_master_yes_tx");
    for i in 1..=20 {
        s.exec(&format!("INSERT INTO app.t VALUES ({i}, 'm{i}')"));
    }
    let st = semi_status(&mut s);
    let yes: u64 = st["Rpl_semi_sync_master_yes_tx"].parse().expect("a count");
    assert!(yes >= yes_before + 20, "{st:?}");
    assert_eq!(st["Rpl_semi_sync_master_no_tx"], "0", "{st:?}");
    assert_eq!(st["Rpl_semi_sync_master_status"], "ON", "{st:?}");
    assert_eq!(
        scalar(&mut r, "SELECT VARIABLE_VALUE FROM information_schema.global_status WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_SLAVE_STATUS'"),
        "ON",
        "MariaDB says it replicates semi-synchronously:\n{}",
        m.error_log()
    );
    let start = Instant::now();
    while scalar(&mut r, "SELECT COUNT(*) FROM app.t") != "20" {
        let st = vertical_row(m.port(), m.password(), "SHOW SLAVE STATUS");
        assert!(
            field(&st, "Last_SQL_Errno") == "0" && start.elapsed() < PATIENCE,
            "MariaDB did not apply the rows: {st:?}\n{}",
            m.error_log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let want = scalar(&mut s, "SELECT GROUP_CONCAT(v ORDER BY id) FROM app.t");
    assert_eq!(
        scalar(&mut r, "SELECT GROUP_CONCAT(v ORDER BY id) FROM app.t"),
        want
    );
    assert!(source.alarms().is_empty(), "{:?}", source.alarms());
}

#[test]
fn a_malformed_acknowledgement_ends_only_that_dump() {
    let source = server(1);
    setup_source(&source);
    let mut s = source.client();
    // Asynchronous meanwhile: nothing is to wait for the fake replica.
    s.exec("SET GLOBAL rpl_semi_sync_source_enabled = 0");
    let mut fake = Client::connect(source.port(), "repl", "replpw").expect("repl logs in");
    fake.exec("SET @rpl_semi_sync_slave = 1, @master_binlog_checksum = 'CRC32'");
    // COM_BINLOG_DUMP from the first file's start.
    let mut dump = vec![0x12u8];
    dump.extend_from_slice(&4u32.to_le_bytes());
    dump.extend_from_slice(&0u16.to_le_bytes());
    dump.extend_from_slice(&99u32.to_le_bytes());
    fake.send_packet(0, &dump).expect("send COM_BINLOG_DUMP");
    let first = fake.read_packet().expect("the first event");
    assert_eq!(
        &first[..3],
        &[0x00, 0xef, 0x00],
        "semi-sync header on every event: {:02x?}",
        &first[..first.len().min(8)]
    );
    wait_for("the fake replica to count", || {
        stat(&mut s, "Rpl_semi_sync_source_clients") == 1
    });
    // Not an acknowledgement (magic 0x00), then a header announcing 16 MiB.
    fake.send_packet(0, &[0x00; 20]).expect("send garbage");
    fake.send_raw(&[0xff, 0xff, 0xff, 0x00])
        .expect("send a huge header");
    assert!(
        fake.closed_by_server(Duration::from_secs(30)),
        "the source ends a dump that sends garbage"
    );
    wait_for("the client count to return to 0", || {
        stat(&mut s, "Rpl_semi_sync_source_clients") == 0
    });
    s.exec("SET GLOBAL rpl_semi_sync_source_enabled = 1");
    s.exec("SET GLOBAL rpl_semi_sync_source_timeout = 100");
    s.exec("INSERT INTO app.t VALUES (1, 'still serving')");
    assert_eq!(scalar(&mut s, "SELECT v FROM app.t"), "still serving");
    assert!(source.alarms().is_empty(), "{:?}", source.alarms());
}
