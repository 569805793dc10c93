//! The slow query log and the general query log over the wire
//! (`canyon_sql::catalog::querylog`), read back by the tools operators use.
//!
//! Covers: SET GLOBAL slow_query_log / long_query_time = 0 and the file that
//! results, summarised by the real `mysqldumpslow` (Debian's MariaDB
//! packages) and by pt-query-digest (percona-toolkit; skipped loudly when
//! absent) with the right counts; slow_query_log=OFF stopping entries;
//! FLUSH LOGS after a rename sending later entries to a new file; the
//! general log from 500 concurrent connections holding every line whole and
//! exactly once; log_output=TABLE refused; the variables read back.

mod common;

use common::{find_program, skip_without, Server};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Runs a workload of 16 slow statements (long_query_time 0) on a new
/// server, with MariaDB's slow-log layout if `mariadb`; returns the log.
fn slow_workload(mariadb: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let server = Server::start_with(common::ServerOptions {
        in_memory: true,
        extra_toml: if mariadb {
            "presentation = \"mariadb\"\n".into()
        } else {
            String::new()
        },
        ..Default::default()
    });
    let dir = tempfile::tempdir().expect("a test step");
    let path = dir.path().join("slow-test.log");
    let mut admin = server.client();
    admin.exec(&format!(
        "SET GLOBAL slow_query_log_file = '{}'",
        path.display()
    ));
    admin.exec("SET GLOBAL long_query_time = 0");
    admin.exec("SET GLOBAL slow_query_log = ON");
    assert_eq!(
        admin
            .query("SELECT @@global.slow_query_log")
            .expect("a test step")
            .scalar(),
        Some("1".into())
    );
    assert_eq!(
        admin
            .query("SELECT @@slow_query_log_file")
            .expect("a test step")
            .scalar(),
        Some(path.display().to_string())
    );
    assert_eq!(
        admin.expect_err("SET SESSION slow_query_log = ON").errno,
        1229
    );
    assert_eq!(
        admin.expect_err("SET GLOBAL log_output = 'TABLE'").errno,
        1235
    );
    // A new connection starts with the global long_query_time 0: all its
    // statements are slow.
    let mut c = server.client();
    c.exec("CREATE DATABASE d");
    c.exec("USE d");
    c.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    for i in 0..5 {
        c.exec(&format!("INSERT INTO t VALUES ({i}, {})", i * 10));
    }
    for i in 0..7 {
        c.exec(&format!("SELECT v FROM t WHERE id = {}", i % 5));
    }
    let rows = c.query("SELECT * FROM t").expect("a test step").rows();
    assert_eq!(rows.len(), 5);
    admin.exec("SET GLOBAL slow_query_log = OFF");
    // Not logged: the log is off.
    for _ in 0..3 {
        c.exec("SELECT 42");
    }
    let text = read(&path);
    assert!(
        text.contains("# Query_time: ") && text.contains("Rows_sent: 5  Rows_examined: 5\n"),
        "{text}"
    );
    assert!(text.contains("\nuse d;\n"), "{text}");
    assert!(!text.contains("SELECT 42"), "entries after OFF:\n{text}");
    assert_eq!(
        text.matches("# Time: ").count(),
        1 + 1 + 1 + 5 + 7 + 1,
        "{text}"
    );
    (dir, path)
}

#[test]
fn slow_log_is_read_by_mysqldumpslow() {
    // Debian's mysqldumpslow is MariaDB's: it reads MariaDB's layout only.
    let (_dir, path) = slow_workload(true);
    let text = read(&path);
    assert!(text.contains("# Thread_id: "), "{text}");
    // mysqldumpslow: abstracted statements with their counts.
    let out = Command::new("/usr/bin/mysqldumpslow")
        .args(["-s", "c"])
        .arg(&path)
        .output()
        .expect("run mysqldumpslow");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{summary}");
    let count_of = |needle: &str| -> u64 {
        let line = summary
            .lines()
            .zip(summary.lines().skip(1))
            .find(|(_, next)| next.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in mysqldumpslow's summary:\n{summary}"))
            .0;
        let count = line
            .trim_start()
            .strip_prefix("Count: ")
            .unwrap_or_else(|| panic!("{line:?}"));
        count
            .split_whitespace()
            .next()
            .expect("a test step")
            .parse()
            .expect("a test step")
    };
    assert_eq!(count_of("INSERT INTO t VALUES (N, N)"), 5, "{summary}");
    assert_eq!(count_of("SELECT v FROM t WHERE id = N"), 7, "{summary}");
    assert!(summary.contains("root[root]@localhost"), "{summary}");
}

#[test]
fn slow_log_in_mysql_8_layout_is_read_by_pt_query_digest() {
    let (_dir, path) = slow_workload(false);
    let text = read(&path);
    assert!(text.contains("  Id: "), "{text}");
    if skip_without("pt-query-digest") {
        return;
    }
    let pt = find_program("pt-query-digest").expect("a test step");
    let out = Command::new(pt)
        .args(["--limit", "100%", "--report-format", "profile"])
        .arg(&path)
        .output()
        .expect("run pt-query-digest");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The profile: one line per class of statements with its calls
    // (`#  RANK 0xID  TIME PCT% CALLS R/CALL V/M ITEM`).
    let classes: Vec<(u64, String)> = report
        .lines()
        .filter(|l| l.starts_with("# ") && l.contains(" 0x"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.get(5)?.parse().ok()?, f[8..].join(" ")))
        })
        .collect();
    let total: u64 = classes.iter().map(|c| c.0).sum();
    assert_eq!(total, 16, "{classes:?}\n{report}");
    assert!(classes.contains(&(7, "SELECT t".into())), "{classes:?}");
    assert!(classes.contains(&(5, "INSERT t".into())), "{classes:?}");
}

#[test]
fn flush_logs_reopens_a_renamed_log() {
    let server = Server::start_with(common::ServerOptions {
        in_memory: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().expect("a test step");
    let path = dir.path().join("general.log");
    let rotated = dir.path().join("general.log.1");
    let mut c = server.client();
    c.exec(&format!(
        "SET GLOBAL general_log_file = '{}'",
        path.display()
    ));
    c.exec("SET GLOBAL general_log = 1");
    c.exec("SELECT 'before rotation'");
    std::fs::rename(&path, &rotated).expect("a test step");
    c.exec("SELECT 'after rename'");
    c.exec("FLUSH LOGS");
    c.exec("SELECT 'after flush'");
    let old = read(&rotated);
    let new = read(&path);
    assert!(old.contains("Query\tSELECT 'before rotation'\n"), "{old}");
    assert!(old.contains("Query\tSELECT 'after rename'\n"), "{old}");
    assert!(!old.contains("after flush"), "{old}");
    assert!(new.starts_with('/') && new.contains(", Version: "), "{new}");
    assert!(new.contains("Query\tSELECT 'after flush'\n"), "{new}");
    // Connect, Init DB and Quit lines come from the connection.
    c.exec("CREATE DATABASE logdb");
    let mut d = server.client();
    d.init_db("logdb").expect("a test step");
    d.quit();
    let id_line = |cmd: &str| {
        let text = read(&path);
        text.lines().any(|l| l.contains(&format!(" {cmd}\t")))
    };
    // The Quit line is written as the server closes the connection.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !id_line("Quit") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(id_line("Connect"), "{}", read(&path));
    assert!(id_line("Init DB"), "{}", read(&path));
    assert!(id_line("Quit"), "{}", read(&path));
}

#[test]
fn general_log_from_500_connections_has_every_line_whole_once() {
    const CONNECTIONS: usize = 500;
    const EACH: usize = 4;
    let server = Server::start_with(common::ServerOptions {
        in_memory: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().expect("a test step");
    let path = dir.path().join("concurrent.log");
    let mut admin = server.client();
    admin.exec(&format!(
        "SET GLOBAL general_log_file = '{}'",
        path.display()
    ));
    admin.exec("SET GLOBAL general_log = ON");
    let barrier = Arc::new(Barrier::new(CONNECTIONS));
    // Long texts make an interleaving visible if writes were split.
    let pad = "x".repeat(300);
    let threads: Vec<_> = (0..CONNECTIONS)
        .map(|i| {
            let barrier = barrier.clone();
            let port = server.port();
            let password = server.password().to_string();
            let pad = pad.clone();
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || {
                    let mut c =
                        common::client::Client::connect(port, "root", &password).expect("connect");
                    barrier.wait();
                    for j in 0..EACH {
                        c.query(&format!("SELECT 'c{i}-s{j}-{pad}'"))
                            .expect("query");
                    }
                })
                .expect("a test step")
        })
        .collect();
    for t in threads {
        t.join().expect("a test step");
    }
    admin.exec("SET GLOBAL general_log = OFF");
    let text = read(&path);
    let mut seen = std::collections::HashMap::new();
    for line in text.lines() {
        if let Some(pos) = line.find("Query\tSELECT 'c") {
            let arg = &line[pos + "Query\tSELECT '".len()..];
            let (tag, rest) = arg.split_once('-').expect("a test step");
            let (stmt, rest) = rest.split_once('-').expect("a test step");
            assert_eq!(rest, format!("{pad}'"), "a line not whole: {line:?}");
            *seen.entry(format!("{tag}-{stmt}")).or_insert(0) += 1;
            // The line's own prefix: time, tab, id, space.
            let prefix = &line[..pos];
            assert!(prefix.ends_with(' ') && prefix.contains("Z\t"), "{line:?}");
        }
    }
    assert_eq!(seen.len(), CONNECTIONS * EACH);
    assert!(seen.values().all(|n| *n == 1), "a statement logged twice");
}
