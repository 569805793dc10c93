//! Canyon as a replica of Canyon (issue 25, item 5), and the `BINLOG
//! '...'` statement that replays mysqlbinlog's output (item 7's
//! point-in-time recovery).
//!
//! - `replica_follows_source_through_kills`: a replica follows a source by
//!   GTID auto-position under a 4-client write load (transfers that keep a
//!   sum, inserts, updates and deletes of many column types) with DDL mixed
//!   in; the replica is killed -9 three times and the source once, each
//!   restarted under load. After catch-up the replica's `gtid_executed` is
//!   the source's (no gap, no duplicate: a duplicate insert would stop its
//!   applier with 1062, a gap leave a GTID missing) and every table hashes
//!   equal. STOP / START REPLICA, SHOW REPLICA STATUS's fields, a replica
//!   with the source's own server_id (1593) and a wrong password (1045).
//! - `replica_ddl_and_position_are_durable_together`: a replica aborted
//!   right after it applied a DDL (a test hook) neither runs that DDL again
//!   after its restart (1060 would stop its applier) nor skips what
//!   follows.
//! - `binlog_statement_replays_mariadb_binlog_output`: the source's log,
//!   read as a file through a raw COM_BINLOG_DUMP and printed by the real
//!   `mariadb-binlog`, piped into the `mariadb` client against a fresh
//!   server, rebuilds every table equal; bad BINLOG statements get MySQL's
//!   errors.

mod common;

use common::client::Client;
use common::{find_program, run_bounded, skip_without, Server, ServerOptions};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CATCH_UP: Duration = Duration::from_secs(180);

fn server(id: u32, log_bin: bool) -> Server {
    Server::start_with(ServerOptions {
        extra_toml: format!("log_bin = {log_bin}\nserver_id = {id}\n"),
        ..ServerOptions::default()
    })
}

fn scalar(c: &mut Client, sql: &str) -> String {
    c.exec(sql).scalar().unwrap_or_default()
}

/// Every table of `db`, each as a hash of its rows in primary-key order.
fn table_hashes(c: &mut Client, db: &str) -> Vec<(String, usize, u64)> {
    let tables: Vec<String> = c
        .exec(&format!("SHOW TABLES FROM {db}"))
        .rows()
        .into_iter()
        .map(|r| r[0].clone().unwrap_or_default())
        .collect();
    let mut out = Vec::new();
    for t in tables {
        let rows = c.exec(&format!("SELECT * FROM {db}.{t} ORDER BY 1")).rows();
        let mut h = DefaultHasher::new();
        rows.hash(&mut h);
        out.push((t, rows.len(), h.finish()));
    }
    out.sort();
    out
}

fn replica_status(port: u16, password: &str) -> Vec<(String, String)> {
    common::vertical_row(port, password, "SHOW REPLICA STATUS")
}

use common::row_field as field;

/// Waits until the replica has every transaction of the source; panics
/// with the replica's status if its applier stops or it does not in time.
fn wait_caught_up(source: &Server, replica: &Server) {
    let mut s = source.client();
    let mut r = replica.client();
    let want = scalar(&mut s, "SELECT @@gtid_executed");
    let start = Instant::now();
    loop {
        let have = scalar(&mut r, "SELECT @@gtid_executed");
        if have == want {
            return;
        }
        let st = replica_status(replica.port(), replica.password());
        assert!(
            field(&st, "Last_SQL_Errno") == "0" || field(&st, "Last_SQL_Errno").is_empty(),
            "replica applier stopped: {st:?}\n{}",
            replica.log_tail()
        );
        assert!(
            start.elapsed() < CATCH_UP,
            "replica did not catch up: has {have}, source {want}\n{st:?}\n{}",
            replica.log_tail()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

const SCHEMA: &str = "CREATE DATABASE app;
CREATE TABLE app.bank (id INT PRIMARY KEY, balance BIGINT NOT NULL);
CREATE TABLE app.items (
  id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  owner INT NOT NULL,
  name VARCHAR(40) CHARACTER SET latin1,
  note TEXT,
  price DECIMAL(12,3),
  ratio DOUBLE,
  f FLOAT,
  day DATE,
  at DATETIME(6),
  ts TIMESTAMP(3) NULL,
  dur TIME(2),
  y YEAR,
  kind ENUM('a','b','c'),
  tags SET('x','y','z'),
  flags BIT(10),
  doc JSON,
  raw VARBINARY(16),
  KEY (owner),
  UNIQUE KEY (name)
);
CREATE TABLE app.nopk (a INT, b VARCHAR(10));";

fn setup(source: &Server) {
    let mut c = source.client();
    for stmt in SCHEMA.split(';').filter(|s| !s.trim().is_empty()) {
        c.exec(stmt);
    }
    let values: Vec<String> = (0..20).map(|i| format!("({i}, 1000)")).collect();
    c.exec(&format!("INSERT INTO app.bank VALUES {}", values.join(",")));
    c.exec("INSERT INTO app.nopk VALUES (1,'one'),(2,'two'),(2,'two'),(3,NULL)");
    c.exec("CREATE USER repl IDENTIFIED WITH mysql_native_password BY 'replpw'");
    c.exec("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO repl");
}

/// One writer: transfers (sum stays 20,000), item inserts / updates /
/// deletes; retries deadlocks and lock timeouts; reconnects when the source
/// restarts.
fn writer(port: u16, password: String, seed: u64, stop: Arc<AtomicBool>) {
    let mut rng = seed;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut client: Option<Client> = None;
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let c = match client.as_mut() {
            Some(c) => c,
            None => match Client::connect(port, "root", &password) {
                Ok(c) => client.insert(c),
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            },
        };
        n += 1;
        let a = next() % 20;
        let b = (a + 1 + next() % 19) % 20;
        let amt = next() % 50;
        let owner = next() % 100;
        let stmts = match n % 4 {
            0 | 1 => vec![
                "BEGIN".to_string(),
                format!("UPDATE app.bank SET balance = balance - {amt} WHERE id = {a}"),
                format!("UPDATE app.bank SET balance = balance + {amt} WHERE id = {b}"),
                "COMMIT".to_string(),
            ],
            2 => vec![format!(
                "INSERT INTO app.items (owner, name, note, price, ratio, f, day, at, ts, dur, y, \
                 kind, tags, flags, doc, raw) VALUES ({owner}, 'n{seed}-{n}-é', REPEAT('t', {}), \
                 {}.125, {}.5e-3, 1.5, '2024-02-29', '2024-03-01 12:34:56.123456', \
                 '2024-03-01 10:00:00.5', '-12:30:00.25', 2024, 'b', 'x,z', b'1010101010', \
                 '{{\"k\": [1, 2.5, \"s\"], \"n\": null}}', 0x00ff10)",
                next() % 300,
                next() % 100_000,
                next() % 1000
            )],
            _ => vec![
                "BEGIN".to_string(),
                format!(
                    "UPDATE app.items SET note = CONCAT(IFNULL(note, ''), 'u'), kind = 'c', \
                     tags = 'y', ts = NOW(), doc = JSON_SET(doc, '$.n', {n}) WHERE owner = {owner}"
                ),
                format!(
                    "DELETE FROM app.items WHERE owner = {} LIMIT 1",
                    next() % 100
                ),
                "COMMIT".to_string(),
            ],
        };
        for s in &stmts {
            match c.query(s) {
                Ok(_) => {}
                Err(e) if e.is_connection_error() => {
                    client = None;
                    break;
                }
                Err(_) => {
                    let _ = c.query("ROLLBACK");
                    break;
                }
            }
        }
    }
}

fn start_load(
    source: &Server,
    writers: u64,
) -> (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let handles = (0..writers)
        .map(|i| {
            let (port, pw, stop) = (source.port(), source.password().to_string(), stop.clone());
            std::thread::spawn(move || writer(port, pw, 0x9e37_79b9 + i * 7919, stop))
        })
        .collect();
    (stop, handles)
}

fn change_source(replica: &Server, source_port: u16, password: &str, auto: bool) {
    let mut r = replica.client();
    let auto = if auto {
        ", SOURCE_AUTO_POSITION = 1"
    } else {
        ""
    };
    r.exec(&format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = {source_port}, \
         SOURCE_USER = 'repl', SOURCE_PASSWORD = '{password}', SOURCE_CONNECT_RETRY = 1, \
         SOURCE_HEARTBEAT_PERIOD = 1{auto}"
    ));
}

#[test]
fn replica_ddl_and_position_are_durable_together() {
    if skip_without("mariadb") {
        return;
    }
    const HOOK: &str = "CANYON_TEST_ABORT_AFTER_REPLICA_DDL";
    let source = server(1, true);
    setup(&source);
    let mut replica = server(2, false);
    change_source(&replica, source.port(), "replpw", true);
    // The hook takes effect at the next start.
    replica.set_env(HOOK, Some("ADD COLUMN z"));
    replica.restart();
    replica.client().exec("START REPLICA");
    let mut s = source.client();
    s.exec("CREATE TABLE app.d (id INT PRIMARY KEY, v INT)");
    s.exec("INSERT INTO app.d VALUES (1, 10)");
    s.exec("ALTER TABLE app.d ADD COLUMN z INT DEFAULT 5");
    s.exec("INSERT INTO app.d VALUES (2, 20, 6)");
    let start = Instant::now();
    while replica.is_running() {
        assert!(
            start.elapsed() < CATCH_UP,
            "the replica did not abort after the ALTER\n{}",
            replica.log_tail()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        replica.log_tail().contains(HOOK),
        "the replica stopped, but not at the hook\n{}",
        replica.log_tail()
    );
    replica.set_env(HOOK, None);
    replica.restart();
    wait_caught_up(&source, &replica);
    let mut r = replica.client();
    let rows = r.exec("SELECT id, v, z FROM app.d ORDER BY id").rows();
    let want = |a: &str, b: &str, c: &str| vec![Some(a.into()), Some(b.into()), Some(c.into())];
    assert_eq!(rows, vec![want("1", "10", "5"), want("2", "20", "6")]);
    let st = replica_status(replica.port(), replica.password());
    assert_eq!(field(&st, "Last_SQL_Errno"), "0", "{st:?}");
    assert_eq!(field(&st, "Replica_SQL_Running"), "Yes", "{st:?}");
}

#[test]
fn replica_follows_source_through_kills() {
    if skip_without("mariadb") {
        return;
    }
    let mut source = server(1, true);
    setup(&source);
    let mut replica = server(2, false);
    change_source(&replica, source.port(), "replpw", true);
    replica.client().exec("START REPLICA");

    // Catch up with the initial schema, then check the status fields.
    wait_caught_up(&source, &replica);
    let st = replica_status(replica.port(), replica.password());
    assert_eq!(field(&st, "Replica_IO_Running"), "Yes", "{st:?}");
    assert_eq!(field(&st, "Replica_SQL_Running"), "Yes", "{st:?}");
    assert_eq!(field(&st, "Source_Server_Id"), "1", "{st:?}");
    assert_eq!(field(&st, "Auto_Position"), "1", "{st:?}");
    let source_uuid = scalar(&mut source.client(), "SELECT @@server_uuid");
    assert_eq!(field(&st, "Source_UUID"), source_uuid, "{st:?}");
    assert!(
        field(&st, "Retrieved_Gtid_Set").starts_with(&source_uuid),
        "{st:?}"
    );
    // A second START is a note, CHANGE while running is refused.
    let mut r = replica.client();
    r.exec("START REPLICA");
    assert_eq!(
        scalar(&mut r, "SHOW WARNINGS"),
        "Note",
        "START on a running replica warns"
    );
    let e = r.expect_err("CHANGE REPLICATION SOURCE TO SOURCE_PORT = 1");
    assert_eq!(e.errno, 1198, "{e:?}");

    let (stop, handles) = start_load(&source, 4);
    let mut ddl = source.client();
    for round in 0..3 {
        std::thread::sleep(Duration::from_millis(1500));
        ddl.exec(&format!(
            "CREATE TABLE app.t{round} (id INT PRIMARY KEY, v VARCHAR(20))"
        ));
        ddl.exec(&format!(
            "INSERT INTO app.t{round} VALUES (1, 'a'), (2, 'b')"
        ));
        ddl.exec(&format!(
            "ALTER TABLE app.t{round} ADD COLUMN w INT DEFAULT 7"
        ));
        ddl.exec(&format!("INSERT INTO app.t{round} VALUES (3, 'c', 9)"));
        ddl.exec("UPDATE app.nopk SET b = CONCAT(IFNULL(b, ''), '+') WHERE a = 2 LIMIT 1");
        // The replica dies at a random moment and comes back by itself.
        replica.kill9();
        std::thread::sleep(Duration::from_millis(300));
        replica.restart();
    }
    // The source too: writers reconnect, the replica retries.
    std::thread::sleep(Duration::from_millis(1000));
    source.kill9();
    source.restart();
    ddl = source.client();
    ddl.exec("DROP TABLE app.t0");
    std::thread::sleep(Duration::from_millis(2000));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    wait_caught_up(&source, &replica);
    let mut s = source.client();
    let mut r = replica.client();
    let sum = scalar(&mut r, "SELECT SUM(balance) FROM app.bank");
    assert_eq!(sum, "20000", "transfers keep the sum on the replica");
    let items: u64 = scalar(&mut s, "SELECT COUNT(*) FROM app.items")
        .parse()
        .unwrap();
    assert!(items > 10, "the load wrote items: {items}");
    assert_eq!(table_hashes(&mut s, "app"), table_hashes(&mut r, "app"));

    // STOP / START: the position survives; writes made while stopped arrive.
    r.exec("STOP REPLICA");
    let st = replica_status(replica.port(), replica.password());
    assert_eq!(field(&st, "Replica_IO_Running"), "No", "{st:?}");
    s.exec("INSERT INTO app.bank VALUES (100, 0)");
    r.exec("START REPLICA");
    wait_caught_up(&source, &replica);
    assert_eq!(
        scalar(&mut r, "SELECT COUNT(*) FROM app.bank WHERE id = 100"),
        "1"
    );

    // A replica with the source's own server_id is refused (1593), and a
    // wrong password stops the I/O thread with 1045; the source serves on.
    let twin = server(1, false);
    change_source(&twin, source.port(), "replpw", true);
    twin.client().exec("START REPLICA");
    let wait_io = |srv: &Server, code: &str| {
        let start = Instant::now();
        loop {
            let st = replica_status(srv.port(), srv.password());
            if field(&st, "Last_IO_Errno") == code {
                assert_eq!(field(&st, "Replica_IO_Running"), "No", "{st:?}");
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "{st:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_io(&twin, "1593");
    let wrong = server(3, false);
    change_source(&wrong, source.port(), "nope", true);
    wrong.client().exec("START REPLICA");
    wait_io(&wrong, "1045");
    s.exec("INSERT INTO app.bank VALUES (101, 0)");
    wait_caught_up(&source, &replica);
    source.assert_running();
}

/// The source's log as a file: a raw COM_BINLOG_DUMP (non-blocking) from
/// the start, framed events written after the magic bytes.
fn log_file(source: &Server, path: &std::path::Path) {
    let mut c = source.client();
    c.exec("SET @master_binlog_checksum = 'CRC32'");
    let file = c.exec("SHOW BINARY LOGS").rows()[0][0]
        .clone()
        .expect("a log file name");
    let mut p = vec![0x12];
    p.extend_from_slice(&4u32.to_le_bytes());
    p.extend_from_slice(&1u16.to_le_bytes()); // BINLOG_DUMP_NON_BLOCK
    p.extend_from_slice(&99u32.to_le_bytes());
    p.extend_from_slice(file.as_bytes());
    c.reset_sequence();
    c.write_packet(&p).expect("COM_BINLOG_DUMP sent");
    let mut out = vec![0xfe, b'b', b'i', b'n'];
    loop {
        let pkt = c.read_packet().expect("a dump packet");
        match pkt.first() {
            Some(0) => {
                let ev = &pkt[1..];
                // Skip the artificial ROTATE the dump starts with (log_pos 0).
                let log_pos = u32::from_le_bytes([ev[13], ev[14], ev[15], ev[16]]);
                if log_pos != 0 {
                    out.extend_from_slice(ev);
                }
            }
            Some(0xfe) => break,
            other => panic!("dump: unexpected packet {other:?}: {pkt:?}"),
        }
    }
    std::fs::write(path, out).expect("log file written");
}

#[test]
fn binlog_statement_replays_mariadb_binlog_output() {
    if skip_without("mariadb") || skip_without("mariadb-binlog") {
        return;
    }
    let source = server(1, true);
    setup(&source);
    let (stop, handles) = start_load(&source, 2);
    std::thread::sleep(Duration::from_millis(2500));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("binlog.000001");
    log_file(&source, &path);
    let printed = Command::new(find_program("mariadb-binlog").unwrap())
        .arg(&path)
        .output()
        .unwrap();
    assert!(printed.status.success(), "{printed:?}");
    let script = String::from_utf8_lossy(&printed.stdout).into_owned();
    assert!(
        script.contains("BINLOG '"),
        "rows are printed as BINLOG statements"
    );
    if let Ok(keep) = std::env::var("CANYON_KEEP_REPLAY") {
        std::fs::write(keep, &script).unwrap();
    }

    let target = server(5, false);
    let out = run_bounded(
        Command::new(find_program("mariadb").unwrap()).args([
            "-h127.0.0.1",
            &format!("-P{}", target.port()),
            "-uroot",
            &format!("-p{}", target.password()),
        ]),
        &script,
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "replay failed: {}\n{}",
        out.stderr,
        target.log_tail()
    );
    let mut s = source.client();
    let mut t = target.client();
    assert_eq!(table_hashes(&mut s, "app"), table_hashes(&mut t, "app"));

    // Bad input: rows before a format description (1609), bad base64
    // (1575), a QUERY event (1730), garbage bytes; the server goes on.
    let mut c = target.client();
    let e = c.expect_err("BINLOG 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'");
    assert!(e.errno == 1609 || e.errno == 1594, "{e:?}");
    let e = c.expect_err("BINLOG '@@@'");
    assert_eq!(e.errno, 1575, "{e:?}");
    let e = c.expect_err("BINLOG 1");
    assert_eq!(e.errno, 1064, "{e:?}");
    let mut u = target.client();
    u.exec("CREATE USER plain IDENTIFIED BY 'pw'");
    let mut plain = Client::connect(target.port(), "plain", "pw").unwrap();
    let e = plain.expect_err("BINLOG 'AAAA'");
    assert_eq!(e.errno, 1227, "{e:?}");
    assert_eq!(scalar(&mut c, "SELECT 1"), "1");
}
