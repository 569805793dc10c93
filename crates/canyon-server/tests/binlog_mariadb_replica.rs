//! A stock MariaDB 10.11 replica following Canyon, and MariaDB's tools
//! reading its binary log (issue 25, items 3 and 4).
//!
//! `mariadb_replica_follows_by_position`: a MariaDB replica (`server_id` 2)
//! follows Canyon (`server_id` 7) from the start of its log, under writes of
//! many column types with DDL mixed in (CREATE, ALTER ADD COLUMN, DROP),
//! transactions that move between tables, and sysbench oltp_read_write
//! (4 clients, several tables per transaction); its I/O thread is
//! restarted mid-stream and Canyon rotates its log. Once its `Exec_Master_Log_Pos` equals
//! Canyon's position, every table's rows hash the same on both, and its
//! `gtid_slave_pos` (from Canyon's MariaDB GTID events) is Canyon's
//! `gtid_binlog_pos`. Bad input: a position inside an event gets 1236 on
//! the replica and Canyon keeps serving.
//!
//! The tests below run Canyon with `presentation = "mariadb"`, whose
//! MariaDB 10.11 version (`5.5.5-10.11.99-MariaDB-canyon-X`) a MariaDB
//! replica needs to replicate by GTID (from a version below 10 it falls
//! back to `Using_Gtid=No`, as the position test's MySQL version shows):
//!
//! - `mariadb_replica_follows_by_gtid`: `MASTER_USE_GTID = slave_pos`
//!   really uses GTIDs (`Using_Gtid = Slave_Pos`, no fallback in its
//!   log), follows writes with DDL, reconnects by GTID after STOP SLAVE /
//!   START SLAVE and after Canyon is killed and restarted; tables hash
//!   equal.
//! - `mariadb_binlog_reads_from_the_server`: `mariadb-binlog
//!   --read-from-remote-server --base64-output=decode-rows -v` prints the
//!   events with the rows decoded.
//! - `mariadb_dump_seeds_a_replica_by_gtid`: `mariadb-dump
//!   --single-transaction --master-data=2 --gtid` under a running write
//!   load takes its coordinates from the consistent snapshot (no FLUSH
//!   TABLES in Canyon's general log); a replica loaded from the dump and
//!   started from its GTID position catches up and hashes equal.

mod common;

use common::client::Client;
use common::{find_program, run_bounded, skip_without, Mariadb, Server, ServerOptions};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a replica may take to catch up (debug builds, a 2-core machine).
const CATCH_UP: Duration = Duration::from_secs(180);

fn canyon() -> Server {
    Server::start_with(ServerOptions {
        extra_toml: "log_bin = true\nserver_id = 7\n".into(),
        ..ServerOptions::default()
    })
}

fn replica() -> Option<Mariadb> {
    Mariadb::start_with(&["--server-id=2", "--skip-slave-start"])
}

fn scalar(c: &mut Client, sql: &str) -> String {
    c.exec(sql).scalar().unwrap_or_default()
}

fn slave_status(m: &Mariadb) -> Vec<(String, String)> {
    common::vertical_row(m.port(), m.password(), "SHOW SLAVE STATUS")
}

use common::row_field as field;

/// Waits until `done` holds on the replica's status; panics with the status
/// and the replica's error log when it does not in time, or when a replica
/// thread stops with an error.
fn wait_replica(m: &Mariadb, what: &str, done: &dyn Fn(&[(String, String)]) -> bool) {
    let start = Instant::now();
    loop {
        let st = slave_status(m);
        if done(&st) {
            return;
        }
        // A thread that stopped on an error (right after START SLAVE a
        // thread can read "No" for a moment without one).
        let failed = ["Last_IO_Errno", "Last_SQL_Errno"]
            .iter()
            .any(|n| !matches!(field(&st, n).as_str(), "" | "0"));
        let stopped = failed
            && (field(&st, "Slave_SQL_Running") == "No" || field(&st, "Slave_IO_Running") == "No");
        if stopped || start.elapsed() > CATCH_UP {
            panic!("replica did not reach {what}: {:#?}\n{}", st, m.error_log());
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The user tables of `dbs` (as Canyon lists them), sorted.
fn tables(c: &mut Client, dbs: &[&str]) -> Vec<(String, String)> {
    let list = dbs
        .iter()
        .map(|d| format!("'{d}'"))
        .collect::<Vec<_>>()
        .join(",");
    let mut t: Vec<(String, String)> = c
        .exec(&format!(
            "SELECT table_schema, table_name FROM information_schema.tables \
             WHERE table_schema IN ({list}) AND table_type = 'BASE TABLE'"
        ))
        .rows()
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default(),
            )
        })
        .collect();
    t.sort();
    t
}

/// A hash of every row of `db`.`t`, in primary-key order, each value as
/// text (the same on both servers for the types used here).
fn table_hash(c: &mut Client, db: &str, t: &str) -> (usize, u64) {
    let rows = c
        .exec(&format!("SELECT * FROM `{db}`.`{t}` ORDER BY 1"))
        .rows();
    let mut h = DefaultHasher::new();
    rows.hash(&mut h);
    (rows.len(), h.finish())
}

/// Every table of `dbs` hashes the same on Canyon and the replica.
fn assert_same_data(c: &mut Client, r: &mut Client, dbs: &[&str]) {
    let on_canyon = tables(c, dbs);
    assert!(!on_canyon.is_empty());
    for (db, t) in &on_canyon {
        let a = table_hash(c, db, t);
        let b = table_hash(r, db, t);
        assert_eq!(a, b, "`{db}`.`{t}`: (rows, hash) on Canyon vs the replica");
    }
    // No table left over on the replica (the DROPs replicated).
    let list = dbs
        .iter()
        .map(|d| format!("'{d}'"))
        .collect::<Vec<_>>()
        .join(",");
    let on_replica: Vec<String> = r
        .exec(&format!(
            "SELECT CONCAT(table_schema, '.', table_name) FROM information_schema.tables \
             WHERE table_schema IN ({list}) ORDER BY 1"
        ))
        .rows()
        .into_iter()
        .map(|r| r[0].clone().unwrap_or_default())
        .collect();
    let expect: Vec<String> = on_canyon.iter().map(|(d, t)| format!("{d}.{t}")).collect();
    assert_eq!(on_replica, expect);
}

/// Writes of many column types with DDL between them; `round` makes each
/// call's rows and tables its own.
fn write_load(c: &mut Client, round: u32) {
    c.exec("CREATE DATABASE IF NOT EXISTS rpl");
    c.exec("USE rpl");
    let t = format!("types{round}");
    c.exec(&format!(
        "CREATE TABLE {t} (id INT PRIMARY KEY, ti TINYINT, si SMALLINT UNSIGNED, \
         mi MEDIUMINT, bi BIGINT UNSIGNED, de DECIMAL(20,6), db DOUBLE, \
         vc VARCHAR(100), ch CHAR(10), tx TEXT, bl BLOB, vb VARBINARY(20), \
         d DATE, dt DATETIME(6), tm TIME(3), ts TIMESTAMP NULL, y YEAR, \
         e ENUM('a','b','c'), s SET('x','y','z'), b BIT(12))"
    ));
    for i in 0..60 {
        c.exec(&format!(
            "INSERT INTO {t} VALUES ({i}, {}, {}, {}, {}, {}.125, {}.5, 'vc {i} é', 'c{i}', \
             REPEAT('text{i} ', {}), UNHEX('00FF{i:02}'), 'vb{i}', '2024-02-{:02}', \
             '2024-03-04 05:06:{:02}.123456', '-12:34:{:02}.5', '2023-01-01 00:00:{:02}', \
             {}, '{}', 'x,{}', b'101010')",
            (i % 200) - 100,
            i * 1000,
            -(i as i64) * 77,
            u64::MAX - i as u64,
            i * 1001,
            i * 3,
            i % 20 + 1,
            i % 28 + 1,
            i % 60,
            i % 60,
            i % 60,
            1990 + i,
            ["a", "b", "c"][i as usize % 3],
            ["y", "z"][i as usize % 2],
        ));
    }
    c.exec(&format!("INSERT INTO {t} (id) VALUES (1000)"));
    c.exec("BEGIN");
    c.exec(&format!(
        "UPDATE {t} SET vc = CONCAT(vc, '!'), de = de * 2 WHERE id % 3 = 0"
    ));
    c.exec(&format!("DELETE FROM {t} WHERE id % 7 = 0"));
    c.exec("COMMIT");
    c.exec(&format!("ALTER TABLE {t} ADD COLUMN extra INT DEFAULT 5"));
    c.exec(&format!("UPDATE {t} SET extra = id * 2 WHERE id < 20"));
    // A transaction that moves between tables and back: each change of
    // table begins a new statement in the log, with its own TABLE_MAP.
    let l = format!("ledger{round}");
    c.exec(&format!(
        "CREATE TABLE {l} (id INT PRIMARY KEY AUTO_INCREMENT, ref INT, note VARCHAR(20))"
    ));
    c.exec("BEGIN");
    c.exec(&format!("UPDATE {t} SET extra = extra + 1 WHERE id = 1"));
    c.exec(&format!("INSERT INTO {l} (ref, note) VALUES (1, 'debit')"));
    c.exec(&format!("UPDATE {t} SET extra = extra - 1 WHERE id = 2"));
    c.exec(&format!("INSERT INTO {l} (ref, note) VALUES (2, 'credit')"));
    c.exec(&format!("DELETE FROM {t} WHERE id = 4"));
    c.exec("COMMIT");
    c.exec("CREATE TABLE scratch (id INT PRIMARY KEY, v VARCHAR(10))");
    c.exec("INSERT INTO scratch VALUES (1, 'a'), (2, 'b')");
    c.exec("DROP TABLE scratch");
    c.exec("BEGIN");
    c.exec(&format!(
        "INSERT INTO {t} (id, vc) VALUES (2000, 'rolled back')"
    ));
    c.exec("ROLLBACK");
}

/// sysbench oltp_read_write against Canyon: each transaction reads and
/// writes rows of several of its tables.
fn sysbench(s: &Server, phase: &str) {
    let mut cmd = Command::new(find_program("sysbench").expect("sysbench is installed"));
    cmd.args([
        "oltp_read_write",
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={}", s.port()),
        "--mysql-user=root",
        &format!("--mysql-password={}", s.password()),
        "--mysql-db=sbtest",
        "--tables=3",
        "--table-size=500",
        "--threads=4",
        "--time=5",
        "--events=0",
        phase,
    ]);
    let out = run_bounded(&mut cmd, "", Duration::from_secs(240));
    let all = format!("{}\n{}", out.stdout, out.stderr);
    assert!(
        out.status.success() && !all.contains("FATAL"),
        "sysbench oltp_read_write {phase} failed ({}):\n{all}",
        out.status
    );
}

fn change_master(r: &mut Client, s: &Server, rest: &str) {
    r.exec(&format!(
        "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {}, MASTER_USER = 'root', \
         MASTER_PASSWORD = '{}', MASTER_CONNECT_RETRY = 1{rest}",
        s.port(),
        s.password()
    ));
}

/// Waits until the replica has executed up to Canyon's SHOW MASTER STATUS.
fn wait_position(c: &mut Client, m: &Mariadb) {
    let ms = c.exec("SHOW MASTER STATUS").rows();
    let file = ms[0][0].clone().unwrap_or_default();
    let pos = ms[0][1].clone().unwrap_or_default();
    wait_replica(m, &format!("{file}:{pos}"), &|st| {
        field(st, "Relay_Master_Log_File") == file && field(st, "Exec_Master_Log_Pos") == pos
    });
}

#[test]
fn mariadb_replica_follows_by_position() {
    let Some(m) = replica() else { return };
    let s = canyon();
    let mut c = s.client();
    let mut r = m.client();
    // Writes before the replica exists: it must fetch them from the log.
    write_load(&mut c, 0);
    // An empty file name is the first file.
    change_master(&mut r, &s, ", MASTER_USE_GTID = no");
    r.exec("START SLAVE");
    wait_replica(&m, "running threads", &|st| {
        field(st, "Slave_IO_Running") == "Yes" && field(st, "Slave_SQL_Running") == "Yes"
    });
    write_load(&mut c, 1);
    // DDL between transactions on another connection.
    let mut d = s.client();
    d.exec("USE rpl");
    d.exec("ALTER TABLE types1 ADD COLUMN during_load VARCHAR(5) DEFAULT 'x'");
    d.exec("CREATE TABLE side (id INT PRIMARY KEY)");
    d.exec("INSERT INTO side VALUES (1), (2), (3)");
    // Reconnect by position mid-stream, then a rotation.
    r.exec("STOP SLAVE IO_THREAD");
    write_load(&mut c, 2);
    r.exec("START SLAVE IO_THREAD");
    c.exec("FLUSH BINARY LOGS");
    write_load(&mut c, 3);
    let dbs: &[&str] = if skip_without("sysbench") {
        &["rpl"]
    } else {
        c.exec("CREATE DATABASE sbtest");
        sysbench(&s, "prepare");
        sysbench(&s, "run");
        &["rpl", "sbtest"]
    };
    wait_position(&mut c, &m);
    assert_same_data(&mut c, &mut r, dbs);
    // The replica tracks Canyon's GTIDs as MariaDB ones.
    assert_eq!(
        scalar(&mut r, "SELECT @@gtid_slave_pos"),
        scalar(&mut c, "SELECT @@gtid_binlog_pos")
    );

    // Bad input: a position inside an event.
    let file = c.exec("SHOW MASTER STATUS").rows()[0][0]
        .clone()
        .unwrap_or_default();
    r.exec("STOP SLAVE");
    change_master(
        &mut r,
        &s,
        &format!(", MASTER_LOG_FILE = '{file}', MASTER_LOG_POS = 200"),
    );
    r.exec("START SLAVE IO_THREAD");
    wait_replica(&m, "error 1236 for a position inside an event", &|st| {
        field(st, "Last_IO_Errno") == "1236"
    });
    r.exec("STOP SLAVE");
    // Canyon is unaffected.
    c.exec("INSERT INTO rpl.types3 (id) VALUES (5000)");
    assert_eq!(
        scalar(&mut c, "SELECT COUNT(*) FROM rpl.types3 WHERE id = 5000"),
        "1"
    );
    assert!(s.alarms().is_empty(), "{:?}", s.alarms());
}

/// Canyon presenting itself as MariaDB 10.11 (`presentation = "mariadb"`),
/// with `extra` config lines.
fn canyon_as_mariadb(extra: &str) -> Server {
    Server::start_with(ServerOptions {
        extra_toml: format!("log_bin = true\nserver_id = 7\npresentation = \"mariadb\"\n{extra}"),
        ..ServerOptions::default()
    })
}

/// Waits until the replica has applied every transaction Canyon logged
/// (its `gtid_slave_pos` is Canyon's `gtid_binlog_pos`) with both threads
/// running.
fn wait_gtid(c: &mut Client, m: &Mariadb) {
    let want = scalar(c, "SELECT @@gtid_binlog_pos");
    assert!(!want.is_empty(), "Canyon logged no transaction");
    let r = std::cell::RefCell::new(m.client());
    wait_replica(m, &format!("GTID {want}"), &|st| {
        field(st, "Slave_IO_Running") == "Yes"
            && field(st, "Slave_SQL_Running") == "Yes"
            && scalar(&mut r.borrow_mut(), "SELECT @@gtid_slave_pos") == want
    });
}

#[test]
fn mariadb_replica_follows_by_gtid() {
    let Some(m) = replica() else { return };
    let mut s = canyon_as_mariadb("");
    let mut c = s.client();
    let mut r = m.client();
    assert!(
        scalar(&mut c, "SELECT VERSION()").starts_with("10.11.99-MariaDB-canyon-"),
        "VERSION() under presentation = mariadb"
    );
    write_load(&mut c, 0);
    change_master(&mut r, &s, ", MASTER_USE_GTID = slave_pos");
    r.exec("START SLAVE");
    wait_gtid(&mut c, &m);
    // It really replicates by GTID: no fallback to positions.
    assert_eq!(field(&slave_status(&m), "Using_Gtid"), "Slave_Pos");
    assert!(
        !m.error_log().contains("Falling back to Using_Gtid=No"),
        "{}",
        m.error_log()
    );
    write_load(&mut c, 1);
    let mut d = s.client();
    d.exec("USE rpl");
    d.exec("ALTER TABLE types1 ADD COLUMN during_load VARCHAR(5) DEFAULT 'x'");
    d.exec("CREATE TABLE side (id INT PRIMARY KEY)");
    d.exec("INSERT INTO side VALUES (1), (2), (3)");
    wait_gtid(&mut c, &m);
    // Both threads stopped and started: it reconnects by its GTID position
    // (what it has applied), not by a file and position.
    r.exec("STOP SLAVE");
    write_load(&mut c, 2);
    c.exec("FLUSH BINARY LOGS");
    d.exec("DROP TABLE side");
    r.exec("START SLAVE");
    wait_gtid(&mut c, &m);
    assert_eq!(field(&slave_status(&m), "Using_Gtid"), "Slave_Pos");
    // Canyon killed and restarted under the replica: it reconnects by GTID
    // and resumes after what it has.
    s.kill9();
    s.restart();
    let mut c = s.client();
    write_load(&mut c, 3);
    wait_gtid(&mut c, &m);
    assert_same_data(&mut c, &mut r, &["rpl"]);
    assert_eq!(field(&slave_status(&m), "Using_Gtid"), "Slave_Pos");

    // Bad input: a GTID position Canyon never logged (another server id)
    // gets 1236 on the replica; Canyon keeps serving.
    r.exec("STOP SLAVE");
    r.exec("SET GLOBAL gtid_slave_pos = '0-99-5'");
    r.exec("START SLAVE IO_THREAD");
    wait_replica(&m, "error 1236 for a foreign GTID", &|st| {
        field(st, "Last_IO_Errno") == "1236"
    });
    r.exec("STOP SLAVE");
    c.exec("INSERT INTO rpl.types3 (id) VALUES (5000)");
    assert_eq!(
        scalar(&mut c, "SELECT COUNT(*) FROM rpl.types3 WHERE id = 5000"),
        "1"
    );
    assert!(s.alarms().is_empty(), "{:?}", s.alarms());
}

#[test]
fn mariadb_binlog_reads_from_the_server() {
    let Some(prog) = find_program("mariadb-binlog") else {
        assert!(!common::in_ci(), "mariadb-binlog is not installed");
        return;
    };
    let s = canyon_as_mariadb("");
    let mut c = s.client();
    c.exec("CREATE DATABASE pitr");
    c.exec("CREATE TABLE pitr.t (id INT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(8,2))");
    c.exec("INSERT INTO pitr.t VALUES (1, 'first-row', 10.50), (2, 'second-row', 20.25)");
    c.exec("UPDATE pitr.t SET name = 'changed-row' WHERE id = 2");
    c.exec("DELETE FROM pitr.t WHERE id = 1");
    let file = c.exec("SHOW MASTER STATUS").rows()[0][0]
        .clone()
        .unwrap_or_default();
    let mut cmd = Command::new(prog);
    cmd.args([
        "--no-defaults",
        "--read-from-remote-server",
        "--protocol=TCP",
        "-h127.0.0.1",
        &format!("-P{}", s.port()),
        "-uroot",
        &format!("-p{}", s.password()),
        "--base64-output=decode-rows",
        "-v",
        &file,
    ]);
    let out = run_bounded(&mut cmd, "", Duration::from_secs(60));
    assert!(
        out.status.success(),
        "mariadb-binlog failed ({}):\n{}\n{}",
        out.status,
        out.stderr,
        out.stdout
    );
    let text = &out.stdout;
    for want in [
        "CREATE TABLE pitr.t",
        "### INSERT INTO `pitr`.`t`",
        "###   @2='first-row'",
        "###   @3=20.25",
        "### UPDATE `pitr`.`t`",
        "###   @2='changed-row'",
        "### DELETE FROM `pitr`.`t`",
        "GTID 0-7-",
        "COMMIT/*!*/;",
    ] {
        assert!(
            text.contains(want),
            "{want:?} not in mariadb-binlog's output:\n{text}"
        );
    }
    // Every transaction is there, numbered as @@gtid_binlog_pos says.
    let last = scalar(&mut c, "SELECT @@gtid_binlog_pos");
    assert!(
        text.contains(&format!("GTID {last} ")),
        "{last} missing:\n{text}"
    );
}

/// A client that inserts into `rpl.live` until told to stop; returns how
/// many rows it committed.
fn writer(
    port: u16,
    password: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u32> {
    std::thread::spawn(move || {
        let mut w = Client::connect(port, "root", &password).expect("writer connects");
        let mut n = 0u32;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            n += 1;
            w.exec(&format!(
                "INSERT INTO rpl.live (id, note) VALUES ({n}, 'row {n}')"
            ));
            if n.is_multiple_of(5) {
                w.exec(&format!(
                    "UPDATE rpl.live SET note = 'updated' WHERE id = {}",
                    n - 3
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        n
    })
}

#[test]
fn mariadb_dump_seeds_a_replica_by_gtid() {
    let Some(m) = replica() else { return };
    let Some(dump) = find_program("mariadb-dump") else {
        assert!(!common::in_ci(), "mariadb-dump is not installed");
        return;
    };
    // MariaDB 10.11 has no utf8mb4_0900_* collation to create the dumped
    // database and tables with: the server default is one it has.
    let s = canyon_as_mariadb("collation_server = \"utf8mb4_general_ci\"\n");
    let mut c = s.client();
    write_load(&mut c, 0);
    c.exec("CREATE TABLE rpl.live (id INT PRIMARY KEY, note VARCHAR(20))");
    // What mariadb-dump checks first: both coordinates, by a lower-case
    // pattern.
    let names: Vec<String> = c
        .exec("SHOW STATUS LIKE 'binlog_snapshot_%'")
        .rows()
        .into_iter()
        .map(|r| r[0].clone().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        [
            "Binlog_snapshot_file",
            "Binlog_snapshot_gtid_pos",
            "Binlog_snapshot_position"
        ]
    );
    // Its fallback's first statement, and the other spelling, are OK;
    // FOR EXPORT is not supported.
    c.exec("FLUSH /*!40101 LOCAL */ TABLES");
    c.exec("FLUSH NO_WRITE_TO_BINLOG TABLES rpl.live");
    assert_eq!(c.expect_err("FLUSH TABLES rpl.live FOR EXPORT").errno, 1235);
    // Canyon's general log shows what the dump sent.
    let general = s.data_dir().join("general.log");
    c.exec(&format!(
        "SET GLOBAL general_log_file = '{}'",
        general.display()
    ));
    c.exec("SET GLOBAL general_log = 1");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let w = writer(s.port(), s.password().to_string(), stop.clone());
    std::thread::sleep(Duration::from_millis(500));
    let mut cmd = Command::new(dump);
    cmd.args([
        "--no-defaults",
        "--protocol=TCP",
        "-h127.0.0.1",
        &format!("-P{}", s.port()),
        "-uroot",
        &format!("-p{}", s.password()),
        "--single-transaction",
        "--master-data=2",
        "--gtid",
        "--databases",
        "rpl",
    ]);
    let out = run_bounded(&mut cmd, "", Duration::from_secs(120));
    assert!(
        out.status.success(),
        "mariadb-dump failed ({}):\n{}",
        out.status,
        out.stderr
    );
    c.exec("SET GLOBAL general_log = 0");
    let log = std::fs::read_to_string(&general).expect("the general log");
    assert!(
        log.contains("SHOW STATUS LIKE 'binlog_snapshot_%'")
            && log.contains("WITH CONSISTENT SNAPSHOT"),
        "the dump did not read the snapshot's coordinates:\n{log}"
    );
    assert!(
        !log.to_ascii_uppercase().contains("FLUSH"),
        "the dump fell back to FLUSH TABLES:\n{log}"
    );
    // The coordinates are in the dump (commented out: --master-data=2).
    let text = &out.stdout;
    let gtid = text
        .split("gtid_slave_pos='")
        .nth(1)
        .and_then(|t| t.split('\'').next())
        .unwrap_or_else(|| {
            panic!(
                "no gtid_slave_pos in the dump:\n{}",
                &text[..text.len().min(3000)]
            )
        })
        .to_string();
    assert!(gtid.starts_with("0-7-"), "{gtid}");
    assert!(
        text.contains("CHANGE MASTER TO MASTER_LOG_FILE="),
        "no file/position in the dump"
    );
    // Writes continue after the dump's snapshot; the replica is seeded from
    // the dump and starts at its GTID.
    std::thread::sleep(Duration::from_millis(500));
    let load = common::mariadb_cli_args(m.port(), m.password(), None, text, &[]);
    assert!(load.status.success(), "loading the dump: {}", load.stderr);
    let mut r = m.client();
    r.exec(&format!("SET GLOBAL gtid_slave_pos = '{gtid}'"));
    change_master(&mut r, &s, ", MASTER_USE_GTID = slave_pos");
    r.exec("START SLAVE");
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = w.join().expect("the writer");
    assert!(written > 20, "the writer wrote {written} rows");
    wait_gtid(&mut c, &m);
    assert_eq!(field(&slave_status(&m), "Using_Gtid"), "Slave_Pos");
    assert_same_data(&mut c, &mut r, &["rpl"]);
    assert_eq!(
        scalar(&mut r, "SELECT COUNT(*) FROM rpl.live"),
        written.to_string()
    );
    assert!(s.alarms().is_empty(), "{:?}", s.alarms());
}
