//! Hot backup and restore (docs/backup.md), with the real `canyon` binary
//! and RocksDB storage:
//!
//! 1. **Under load.** Four clients move money between accounts (each
//!    transfer also appends a ledger row, in the same transaction) while
//!    `canyon backup` runs. The backup restored into a new data directory
//!    and served by a new server must hold a state the source passed
//!    through at the backup's GTID set: the balances sum to the initial
//!    total, every balance equals the initial one plus the ledger rows
//!    present (no transaction torn), and the ledger holds exactly one row
//!    per transfer GTID in the manifest — so the restored data is the
//!    source's at that GTID, not merely some consistent state.
//! 2. **Exact copy, incremental.** Writes stopped, an incremental backup
//!    on the first one restores to a server whose every row equals the
//!    source's, and it reused the unchanged SST files.
//! 3. **Damage.** A copy of the backup with one byte of an SST file changed
//!    fails `--verify` and `restore`; a copy without its `COMPLETE` marker
//!    (a backup killed half way) is refused.

// Tests: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use common::client::Client;
use common::{Server, ServerOptions};
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ACCOUNTS: u64 = 20;
const INITIAL: i64 = 1000;
const CLIENTS: u64 = 4;

fn options() -> ServerOptions {
    ServerOptions {
        extra_toml: "log_bin = true\nserver_id = 11\n".into(),
        ..Default::default()
    }
}

fn canyon(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_canyon"))
        .args(args)
        .output()
        .expect("run canyon");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn backup(source: &Server, to: &Path, base: Option<&Path>) -> serde_json::Value {
    let port = source.port().to_string();
    let to_s = to.to_str().unwrap();
    let mut args = vec![
        "backup",
        "--port",
        &port,
        "--user",
        "root",
        "--password",
        source.password(),
        "--to",
        to_s,
    ];
    let base_s;
    if let Some(b) = base {
        base_s = b.to_str().unwrap().to_string();
        args.extend(["--incremental-base", &base_s]);
    }
    let (ok, stdout, stderr) = canyon(&args);
    assert!(ok, "canyon backup failed:\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("canyon backup:") && stderr.contains("files"),
        "no progress line on stderr: {stderr}"
    );
    let text = std::fs::read_to_string(to.join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A server on the data directory restored from `from`, logged in with the
/// source's root password (the accounts come with the data).
fn restored_server(from: &Path, password: &str) -> (Server, Client) {
    let mut server = Server::start_with(options());
    server.kill9();
    let data = server.data_dir();
    std::fs::remove_dir_all(&data).unwrap();
    let (ok, stdout, stderr) = canyon(&[
        "restore",
        "--from",
        from.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert!(ok, "canyon restore failed:\n{stdout}\n{stderr}");
    server.restart();
    let client = Client::connect(server.port(), "root", password)
        .unwrap_or_else(|e| panic!("connect to the restored server: {e}\n{}", server.log_tail()));
    (server, client)
}

fn rows(c: &mut Client, sql: &str) -> Vec<Vec<Option<String>>> {
    c.exec(sql).rows()
}

fn scalar(c: &mut Client, sql: &str) -> String {
    c.exec(sql).scalar().unwrap_or_default()
}

/// The last number of a one-interval GTID set `uuid:1-N` (0 when empty).
fn gtid_count(set: &str) -> u64 {
    if set.is_empty() {
        return 0;
    }
    let tail = set.rsplit(':').next().unwrap();
    tail.rsplit('-').next().unwrap().parse().unwrap()
}

/// A recursive copy with new inodes (a backup's SST files may be hard links
/// to the live database's: damaging one in place would damage the source).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn largest_sst(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("an SST file in the backup")
}

#[test]
fn backup_under_load_restore_verify_and_damage() {
    let source = Server::start_with(options());
    let mut c = source.client();
    c.exec("CREATE DATABASE bank");
    c.exec("CREATE TABLE bank.acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)");
    c.exec(
        "CREATE TABLE bank.ledger (id BIGINT PRIMARY KEY, src INT NOT NULL, dst INT NOT NULL, \
         amount BIGINT NOT NULL)",
    );
    let values: Vec<String> = (0..ACCOUNTS).map(|i| format!("({i}, {INITIAL})")).collect();
    c.exec(&format!(
        "INSERT INTO bank.acct VALUES {}",
        values.join(",")
    ));
    // Enough rows that the data is in SST files of some size.
    c.exec("CREATE TABLE bank.filler (id INT PRIMARY KEY, pad VARCHAR(200))");
    for chunk in 0..10 {
        let v: Vec<String> = (0..500)
            .map(|i| format!("({}, REPEAT('x', 150))", chunk * 500 + i))
            .collect();
        c.exec(&format!("INSERT INTO bank.filler VALUES {}", v.join(",")));
    }
    let setup_gtids = gtid_count(&scalar(&mut c, "SELECT @@gtid_executed"));
    assert!(setup_gtids > 0, "the binary log is on: setup is logged");

    // Phase 1: transfers while the backup runs.
    let stop = Arc::new(AtomicBool::new(false));
    let next_id = Arc::new(AtomicU64::new(1));
    let committed = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..CLIENTS)
        .map(|w| {
            let (stop, next_id, committed) = (stop.clone(), next_id.clone(), committed.clone());
            let mut c = source.client();
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(w);
                while !stop.load(Ordering::Relaxed) {
                    let a = rng.gen_range(0..ACCOUNTS);
                    let b = (a + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
                    let amount = rng.gen_range(1..50);
                    let id = next_id.fetch_add(1, Ordering::Relaxed);
                    let txn = [
                        "BEGIN".to_string(),
                        format!("UPDATE bank.acct SET bal = bal - {amount} WHERE id = {a}"),
                        format!("UPDATE bank.acct SET bal = bal + {amount} WHERE id = {b}"),
                        format!("INSERT INTO bank.ledger VALUES ({id}, {a}, {b}, {amount})"),
                        "COMMIT".to_string(),
                    ];
                    match txn.iter().try_for_each(|q| c.query(q).map(drop)) {
                        Ok(()) => {
                            committed.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) if e.errno == 1213 || e.errno == 1205 => {
                            let _ = c.query("ROLLBACK");
                        }
                        Err(e) => panic!("transfer failed: {e}"),
                    }
                }
            })
        })
        .collect();
    let wait_for = |n: u64, workers: &[std::thread::JoinHandle<()>]| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while committed.load(Ordering::Relaxed) < n {
            assert!(
                !workers.iter().any(|w| w.is_finished()),
                "a transfer client stopped (see its panic above)"
            );
            assert!(Instant::now() < deadline, "no progress: {committed:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(50, &workers);
    let dir = tempfile::tempdir().unwrap();
    let b1 = dir.path().join("b1");
    let m1 = backup(&source, &b1, None);
    let at_backup = committed.load(Ordering::Relaxed);
    wait_for(at_backup + 50, &workers);
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(m1["canyon_version"], env!("CARGO_PKG_VERSION"));
    let gtids1 = m1["gtid_executed"].as_str().unwrap().to_string();
    assert!(m1["binlog_file"].as_str().unwrap().starts_with("binlog."));
    assert!(m1["binlog_position"].as_u64().unwrap() > 4);

    {
        let (_restored, mut r) = restored_server(&b1, source.password());
        assert_eq!(scalar(&mut r, "SELECT @@gtid_executed"), gtids1);
        let total = scalar(&mut r, "SELECT SUM(bal) FROM bank.acct");
        assert_eq!(total, (INITIAL * ACCOUNTS as i64).to_string());
        // Every balance is the initial one plus the ledger's transfers.
        let mismatched = rows(
            &mut r,
            "SELECT a.id, a.bal, \
               (SELECT COALESCE(SUM(amount), 0) FROM bank.ledger WHERE dst = a.id) - \
               (SELECT COALESCE(SUM(amount), 0) FROM bank.ledger WHERE src = a.id) \
             FROM bank.acct a",
        )
        .into_iter()
        .filter(|row| {
            let bal: i64 = row[1].as_ref().unwrap().parse().unwrap();
            let net: i64 = row[2].as_ref().unwrap().parse().unwrap();
            bal != INITIAL + net
        })
        .collect::<Vec<_>>();
        assert!(mismatched.is_empty(), "torn transfers: {mismatched:?}");
        // Exactly the transfers of the manifest's GTID set (one GTID each).
        let ledger: u64 = scalar(&mut r, "SELECT COUNT(*) FROM bank.ledger")
            .parse()
            .unwrap();
        assert_eq!(ledger, gtid_count(&gtids1) - setup_gtids);
        assert!(ledger >= 50, "the backup was taken under load");
        // And each of those rows is the source's.
        let restored_ledger = rows(&mut r, "SELECT * FROM bank.ledger ORDER BY id");
        let source_ids = restored_ledger
            .iter()
            .map(|row| row[0].clone().unwrap())
            .collect::<Vec<_>>()
            .join(",");
        let from_source = rows(
            &mut c,
            &format!("SELECT * FROM bank.ledger WHERE id IN ({source_ids}) ORDER BY id"),
        );
        assert_eq!(restored_ledger, from_source);
        assert_eq!(
            scalar(&mut r, "SELECT COUNT(*) FROM bank.filler"),
            "5000".to_string()
        );
        // The restored server takes writes and logs them after the backup's GTIDs.
        r.exec("INSERT INTO bank.ledger VALUES (0, 0, 0, 0)");
        assert_eq!(
            gtid_count(&scalar(&mut r, "SELECT @@gtid_executed")),
            gtid_count(&gtids1) + 1
        );
    }

    // Phase 2: writes stopped; an incremental backup is an exact copy.
    let b2 = dir.path().join("b2");
    let m2 = backup(&source, &b2, Some(&b1));
    let reused = m2["files"]
        .as_object()
        .unwrap()
        .values()
        .filter(|f| f["reused"] == true)
        .count();
    assert!(reused > 0, "the incremental backup reused no file: {m2}");
    assert_eq!(
        m2["gtid_executed"].as_str().unwrap(),
        scalar(&mut c, "SELECT @@gtid_executed")
    );
    // Nothing committed since: the position is the log's end.
    let status = rows(&mut c, "SHOW MASTER STATUS").remove(0);
    assert_eq!(m2["binlog_file"].as_str(), status[0].as_deref());
    assert_eq!(
        m2["binlog_position"].as_u64().map(|p| p.to_string()),
        status[1]
    );
    let (ok, out, err) = canyon(&["backup", "--verify", b2.to_str().unwrap()]);
    assert!(ok, "verify of a good backup failed: {out}{err}");
    {
        let (_restored, mut r) = restored_server(&b2, source.password());
        for table in ["acct", "ledger", "filler"] {
            let q = format!("SELECT * FROM bank.{table} ORDER BY id");
            assert_eq!(rows(&mut r, &q), rows(&mut c, &q), "bank.{table} differs");
        }
    }

    // Phase 3: damage.
    let bad = dir.path().join("bad");
    copy_dir(&b1, &bad);
    let sst = largest_sst(&bad);
    let mut bytes = std::fs::read(&sst).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&sst, bytes).unwrap();
    let (ok, _, err) = canyon(&["backup", "--verify", bad.to_str().unwrap()]);
    assert!(!ok && err.contains("checksum mismatch"), "{err}");
    let (ok, _, err) = canyon(&[
        "restore",
        "--from",
        bad.to_str().unwrap(),
        "--data-dir",
        dir.path().join("bad-data").to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("failed verification"), "{err}");
    assert!(!dir.path().join("bad-data").exists());

    let incomplete = dir.path().join("incomplete");
    copy_dir(&b1, &incomplete);
    std::fs::remove_file(incomplete.join("COMPLETE")).unwrap();
    let (ok, _, err) = canyon(&[
        "restore",
        "--from",
        incomplete.to_str().unwrap(),
        "--data-dir",
        dir.path().join("inc-data").to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("not a complete backup"), "{err}");

    // BACKUP TO itself: an existing directory and a relative one are refused.
    let e = c.expect_err(&format!("BACKUP TO '{}'", b1.display()));
    assert_eq!(e.errno, 1086);
    let e = c.expect_err("BACKUP TO 'relative/dir'");
    assert_eq!(e.errno, 1105);
}

/// The recovery argument for what is in flight at the backup: an XA branch
/// prepared before it is prepared again on the restored server (its
/// coordinator can still commit it there); a transaction open but not
/// committed at the backup is absent.
#[test]
fn in_flight_transactions_at_the_backup() {
    let source = Server::start_with(options());
    let mut c = source.client();
    c.exec("CREATE DATABASE xa");
    c.exec("CREATE TABLE xa.t (id INT PRIMARY KEY, v INT)");
    c.exec("INSERT INTO xa.t VALUES (1, 10)");
    c.exec("XA START 'b1'");
    c.exec("INSERT INTO xa.t VALUES (2, 20)");
    c.exec("XA END 'b1'");
    c.exec("XA PREPARE 'b1'");
    let mut open = source.client();
    open.exec("BEGIN");
    open.exec("INSERT INTO xa.t VALUES (3, 30)");

    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    backup(&source, &b, None);
    open.exec("COMMIT");

    let (_restored, mut r) = restored_server(&b, source.password());
    assert_eq!(
        rows(&mut r, "XA RECOVER"),
        vec![vec![
            Some("1".to_string()),
            Some("2".to_string()),
            Some("0".to_string()),
            Some("b1".to_string())
        ]]
    );
    assert_eq!(scalar(&mut r, "SELECT COUNT(*) FROM xa.t"), "1");
    r.exec("XA COMMIT 'b1'");
    assert_eq!(
        rows(&mut r, "SELECT * FROM xa.t ORDER BY id"),
        vec![
            vec![Some("1".to_string()), Some("10".to_string())],
            vec![Some("2".to_string()), Some("20".to_string())]
        ]
    );
}
