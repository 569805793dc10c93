//! Binary log retention (issue 25, item 1): `binlog_expire_logs_seconds`.
//!
//! `expired_files_go_at_rotation_and_startup_but_not_while_read`: with a
//! limit of 3 s (set in the configuration), files whose successor started
//! more than 3 s ago are purged at FLUSH BINARY LOGS and at startup; 0 (SET
//! GLOBAL) keeps every file; a replica stalled in the first file (a raw
//! COM_BINLOG_DUMP whose socket is not read, so the server's reader cannot
//! move past a 24 MiB file) holds that file and every later one against
//! expiry and against PURGE BINARY LOGS (warning 1867); once it is gone
//! they go. The variable's errors (1229 for SET SESSION, 1231 for a value
//! out of range) and `expire_logs_days` (the same limit in days).

mod common;

use common::client::Client;
use common::{Server, ServerOptions};
use std::time::Duration;

/// The limit the test's server runs with.
const EXPIRE_SECONDS: u64 = 3;

fn scalar(c: &mut Client, sql: &str) -> String {
    c.exec(sql).scalar().unwrap_or_default()
}

/// SHOW BINARY LOGS' file names.
fn files(c: &mut Client) -> Vec<String> {
    c.exec("SHOW BINARY LOGS")
        .rows()
        .into_iter()
        .map(|r| r[0].clone().unwrap_or_default())
        .collect()
}

fn names(numbers: &[u32]) -> Vec<String> {
    numbers.iter().map(|n| format!("binlog.{n:06}")).collect()
}

/// Longer than the limit.
fn age() {
    std::thread::sleep(Duration::from_secs(EXPIRE_SECONDS + 1));
}

#[test]
fn expired_files_go_at_rotation_and_startup_but_not_while_read() {
    let mut s = Server::start_with(ServerOptions {
        extra_toml: format!(
            "log_bin = true\nserver_id = 7\nbinlog_expire_logs_seconds = {EXPIRE_SECONDS}\n"
        ),
        max_allowed_packet: Some(64 << 20),
        ..ServerOptions::default()
    });
    let mut c = s.client();
    assert_eq!(
        scalar(&mut c, "SELECT @@GLOBAL.binlog_expire_logs_seconds"),
        EXPIRE_SECONDS.to_string()
    );
    assert_eq!(
        c.expect_err("SET binlog_expire_logs_seconds = 5").errno,
        1229
    );
    assert_eq!(
        c.expect_err("SET GLOBAL binlog_expire_logs_seconds = -1")
            .errno,
        1231
    );
    c.exec("SET GLOBAL expire_logs_days = 1.5");
    assert_eq!(
        scalar(&mut c, "SELECT @@binlog_expire_logs_seconds"),
        "129600"
    );
    c.exec(&format!(
        "SET GLOBAL binlog_expire_logs_seconds = {EXPIRE_SECONDS}"
    ));

    // File 1: 24 MiB of rows, more than the sockets between a stalled
    // replica and the server's reader can buffer.
    c.exec("CREATE DATABASE ret");
    c.exec("CREATE TABLE ret.t (id INT PRIMARY KEY, b LONGBLOB)");
    for i in 0..24 {
        c.exec(&format!(
            "INSERT INTO ret.t VALUES ({i}, REPEAT('x', 1048576))"
        ));
    }
    // Rotation right after: file 1 has just stopped receiving events, so
    // it is not expired.
    c.exec("FLUSH BINARY LOGS");
    assert_eq!(files(&mut c), names(&[1, 2]));

    // 0 keeps every file.
    c.exec("SET GLOBAL binlog_expire_logs_seconds = 0");
    age();
    c.exec("FLUSH BINARY LOGS");
    assert_eq!(files(&mut c), names(&[1, 2, 3]));
    c.exec(&format!(
        "SET GLOBAL binlog_expire_logs_seconds = {EXPIRE_SECONDS}"
    ));

    // A replica reading file 1, stalled: COM_BINLOG_DUMP from its start, then
    // nothing read after the first event.
    let mut replica = s.client();
    let mut dump = vec![0x12u8];
    dump.extend_from_slice(&4u32.to_le_bytes());
    dump.extend_from_slice(&0u16.to_le_bytes());
    dump.extend_from_slice(&42u32.to_le_bytes());
    dump.extend_from_slice(b"binlog.000001");
    replica.send_packet(0, &dump).expect("send COM_BINLOG_DUMP");
    let first = replica.read_packet().expect("the dump's first event");
    assert_eq!(first[0], 0, "the dump started: {first:?}");
    age();
    // Files 1 to 3 are expired, but file 1 is being read: nothing goes.
    c.exec("FLUSH BINARY LOGS");
    assert_eq!(files(&mut c), names(&[1, 2, 3, 4]));
    // PURGE stops there too, and says so.
    c.exec("PURGE BINARY LOGS TO 'binlog.000004'");
    let warnings = c.exec("SHOW WARNINGS").rows();
    assert!(
        warnings.iter().any(|w| w[1].as_deref() == Some("1867")
            && w[2].as_deref().is_some_and(|m| m.contains("binlog.000001"))),
        "{warnings:?}"
    );
    assert_eq!(files(&mut c), names(&[1, 2, 3, 4]));

    // The replica goes: its file is free. Files 1 to 3 expired long ago;
    // file 4 stopped receiving events only now.
    drop(replica);
    age();
    c.exec("FLUSH BINARY LOGS");
    assert_eq!(files(&mut c), names(&[4, 5]));
    assert!(scalar(&mut c, "SELECT @@gtid_purged").ends_with(":1-26"));

    // At startup: files 4 and 5 stopped receiving events longer ago than
    // the limit by then.
    c.exec("INSERT INTO ret.t VALUES (100, 'after')");
    c.exec("FLUSH BINARY LOGS");
    let executed = scalar(&mut c, "SELECT @@gtid_executed");
    age();
    s.restart();
    let mut c = s.client();
    assert_eq!(files(&mut c), names(&[6]));
    assert_eq!(scalar(&mut c, "SELECT @@gtid_executed"), executed);
    assert_eq!(scalar(&mut c, "SELECT COUNT(*) FROM ret.t"), "25");
    assert!(s.alarms().is_empty(), "{:?}", s.alarms());
}
