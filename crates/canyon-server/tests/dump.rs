//! Dumps and restores with the real mariadb-dump (10.11): a Canyon database
//! dumped and restored into Canyon and into MariaDB 10.11, and a MariaDB dump
//! restored into Canyon — each compared row for row, byte for byte, with the
//! original. The data exercises what dumps get wrong: 4-byte UTF-8 in names
//! and values, quotes and backslashes, binary bytes, NULLs, DECIMAL and
//! date/time values, unsigned extremes, AUTO_INCREMENT and secondary indexes,
//! and a FOREIGN KEY whose child table sorts (and so is dumped and restored)
//! before its parent — the dump's `FOREIGN_KEY_CHECKS=0` must let it through.

mod common;

use common::client::Client;
use common::{
    find_program, mariadb_cli_args, run_bounded, skip_without, Mariadb, Server, ServerOptions,
    CLIENT_TIMEOUT,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The schema and rows every side starts from (run in database `src`). The
/// tables name their collations: Canyon's default, MySQL 8's
/// utf8mb4_0900_ai_ci, is unknown to MariaDB 10.11 (1273), exactly as a MySQL 8
/// dump is; general_ci and unicode_ci exist on both and must survive the trip.
const SETUP: &str = r#"
CREATE TABLE items (
  id INT NOT NULL AUTO_INCREMENT,
  name VARCHAR(64) NOT NULL,
  price DECIMAL(10,2),
  added DATETIME,
  day DATE,
  big BIGINT UNSIGNED,
  ratio DOUBLE,
  raw VARBINARY(16),
  note TEXT,
  PRIMARY KEY (id),
  UNIQUE KEY u_name (name),
  KEY k_day (day, price)
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
INSERT INTO items (name, price, added, day, big, ratio, raw, note) VALUES
  ('snow ☃', 1.50, '2026-01-01 10:00:00', '2026-01-01', 18446744073709551615, 0.25, X'00FF0A0D5C27', 'plain'),
  ('clef 𝄢 and 😀', NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('quote '' and \\ backslash', -99999999.99, '1999-12-31 23:59:59', '1000-01-01', 0, -1.5e300, X'', 'line\nbreak\ttab'),
  ('zero', 0.00, '2026-11-22 08:00:00', '9999-12-31', 42, 3.141592653589793, X'01', '');
CREATE TABLE `☃ music` (a INT NOT NULL, b VARCHAR(10) NOT NULL, c INT, PRIMARY KEY (a, b)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
INSERT INTO `☃ music` VALUES (1, 'x', NULL), (1, 'y', 2), (2, '☃', 3);
CREATE TABLE b_lines (
  id INT NOT NULL PRIMARY KEY,
  item INT,
  qty INT,
  CONSTRAINT line_item FOREIGN KEY (item) REFERENCES items (id) ON DELETE CASCADE
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
INSERT INTO b_lines VALUES (1, 1, 5), (2, 1, 6), (3, 4, 7), (4, NULL, 8);
"#;

/// The queries compared across servers (run in the restored database).
const CHECKS: &[&str] = &[
    "SELECT id, name, price, added, day, big, ratio, HEX(raw), note FROM items ORDER BY id",
    "SELECT a, b, c FROM `☃ music` ORDER BY a, b",
    "SELECT COUNT(*), SUM(price), MAX(big) FROM items",
    "SELECT name FROM items WHERE day >= '2000-01-01' ORDER BY day, price",
    "SELECT table_name, column_name, collation_name FROM information_schema.columns \
     WHERE table_schema = DATABASE() AND collation_name IS NOT NULL ORDER BY 1, 2",
    "SELECT name FROM items WHERE name = 'ZERO'",
    "SELECT id, item, qty FROM b_lines ORDER BY id",
    "SELECT constraint_name, table_name, column_name, referenced_table_name, referenced_column_name \
     FROM information_schema.key_column_usage \
     WHERE table_schema = DATABASE() AND referenced_table_name IS NOT NULL ORDER BY 1",
    "SELECT constraint_name, delete_rule FROM information_schema.referential_constraints \
     WHERE constraint_schema = DATABASE() ORDER BY 1",
];

fn skip() -> bool {
    skip_without("mariadb") || skip_without("mariadb-dump") || skip_without("mariadbd")
}

/// Runs `sql` through the mariadb CLI in `db` (created first when `create`).
fn run_sql(port: u16, password: &str, db: &str, sql: &str) {
    let create = mariadb_cli_args(
        port,
        password,
        None,
        &format!("CREATE DATABASE IF NOT EXISTS `{db}` CHARACTER SET utf8mb4"),
        &[],
    );
    assert!(create.status.success(), "{}", create.stderr);
    let out = mariadb_cli_args(
        port,
        password,
        Some(db),
        sql,
        &["--default-character-set=utf8mb4"],
    );
    assert!(
        out.status.success(),
        "mariadb failed on port {port}: {}\n--- input (first 3000 bytes) ---\n{}",
        out.stderr,
        &sql[..sql.len().min(3000)]
    );
}

/// mariadb-dump of `db` with `extra` options into a file of `dir`; the dump
/// is bytes, not text (BLOB values are written raw), so it never passes
/// through a Rust `String`.
fn dump(dir: &Path, port: u16, password: &str, db: &str, extra: &[&str]) -> PathBuf {
    let file = dir.join(format!("{port}-{db}-{}.sql", extra.len()));
    let mut cmd = Command::new(find_program("mariadb-dump").expect("checked by skip()"));
    cmd.arg("--no-defaults")
        .args([
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{port}"),
            "-uroot",
        ])
        .arg(format!("-p{password}"))
        .arg("--no-tablespaces")
        .arg(format!("--result-file={}", file.display()))
        .args(extra)
        .arg(db);
    let out = run_bounded(&mut cmd, "", CLIENT_TIMEOUT);
    assert!(
        out.status.success(),
        "mariadb-dump on port {port} failed: {}",
        out.stderr
    );
    let bytes = std::fs::read(&file).expect("read the dump");
    assert!(
        bytes.windows(11).any(|w| w == b"INSERT INTO"),
        "no data dumped:\n{}",
        String::from_utf8_lossy(&bytes)
    );
    file
}

/// Replays the dump `file` into `db` (created first) with the mariadb CLI,
/// its standard input the file itself.
fn restore(port: u16, password: &str, db: &str, file: &Path) {
    run_sql(port, password, db, "SELECT 1");
    let out = Command::new("timeout")
        .arg(CLIENT_TIMEOUT.as_secs().to_string())
        .arg(find_program("mariadb").expect("checked by skip()"))
        .arg("--no-defaults")
        .args([
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{port}"),
            "-uroot",
        ])
        .arg(format!("-p{password}"))
        .arg("--default-character-set=utf8mb4")
        .arg(db)
        .stdin(std::fs::File::open(file).expect("open the dump"))
        .output()
        .expect("run the mariadb CLI");
    assert!(
        out.status.success(),
        "restoring {} on port {port} failed: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The CHECKS results in `db`.
fn results(c: &mut Client, db: &str) -> Vec<Vec<Vec<Option<String>>>> {
    c.exec(&format!("USE `{db}`"));
    CHECKS
        .iter()
        .map(|q| c.query(q).unwrap_or_else(|e| panic!("{q}: {e:?}")).rows())
        .collect()
}

#[test]
fn dumps_round_trip_between_canyon_and_mariadb() {
    if skip() {
        return;
    }
    let canyon = Server::start_with(ServerOptions {
        in_memory: true,
        ..ServerOptions::default()
    });
    let Some(maria) = Mariadb::start() else {
        return;
    };
    let (cp, cpw) = (canyon.port(), canyon.password().to_string());
    let (mp, mpw) = (maria.port(), maria.password().to_string());
    run_sql(cp, &cpw, "src", SETUP);
    run_sql(mp, &mpw, "src", SETUP);
    let mut cc = canyon.client();
    let mut mc = maria.client();
    let original = results(&mut cc, "src");
    assert_eq!(original.len(), CHECKS.len());
    assert_eq!(original[0].len(), 4, "{original:?}");
    // The reference server agrees with Canyon on the data itself.
    assert_eq!(
        results(&mut mc, "src"),
        original,
        "MariaDB vs Canyon, before any dump"
    );

    // Canyon -> Canyon and Canyon -> MariaDB, with the default options (LOCK
    // TABLES ... READ around the reads) and with --single-transaction.
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (options, target) in [
        (&[][..], "from_canyon"),
        (&["--single-transaction"][..], "from_canyon_st"),
    ] {
        let file = dump(dir.path(), cp, &cpw, "src", options);
        restore(cp, &cpw, target, &file);
        restore(mp, &mpw, target, &file);
        assert_eq!(
            results(&mut cc, target),
            original,
            "{target} restored into Canyon"
        );
        assert_eq!(
            results(&mut mc, target),
            original,
            "{target} restored into MariaDB"
        );
    }

    // MariaDB -> Canyon.
    let file = dump(dir.path(), mp, &mpw, "src", &[]);
    restore(cp, &cpw, "from_mariadb", &file);
    assert_eq!(
        results(&mut cc, "from_mariadb"),
        original,
        "MariaDB dump restored into Canyon"
    );

    // The restored tables are whole tables: AUTO_INCREMENT goes on after the
    // dumped ids, and the unique key still holds.
    cc.exec("USE from_mariadb");
    cc.exec("INSERT INTO items (name) VALUES ('after restore')");
    let id = cc
        .query("SELECT id FROM items WHERE name = 'after restore'")
        .expect("query")
        .scalar();
    assert_eq!(id.as_deref(), Some("5"));
    let e = cc.expect_err("INSERT INTO items (name) VALUES ('zero')");
    assert_eq!(e.errno, 1062);
    // ... and the restored foreign key is enforced, its cascade included.
    let e = cc.expect_err("INSERT INTO b_lines VALUES (9, 99, 1)");
    assert_eq!(e.errno, 1452);
    cc.exec("DELETE FROM items WHERE id = 1");
    let left = cc
        .query("SELECT COUNT(*) FROM b_lines")
        .expect("query")
        .scalar();
    assert_eq!(left.as_deref(), Some("2"));
}

/// mariadb-dump's default `--lock-tables` (LOCK TABLES ... READ on every
/// table of the database, then one SELECT per table) gives a consistent dump
/// while transfers between two tables commit: the READ locks hold the
/// writers back until the last table is read, so the restored copy's total
/// is the total. (Without blocking table locks the dump reads `a` and `b` at
/// different moments, and the transfers in between show as money created or
/// lost.)
#[test]
fn lock_tables_dump_is_consistent_under_write_load() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    if skip() {
        return;
    }
    const ROWS: i64 = 20_000;
    let canyon = Server::start_with(ServerOptions::default());
    let (port, pw) = (canyon.port(), canyon.password().to_string());
    let mut c = canyon.client();
    c.exec("CREATE DATABASE bank");
    c.exec("USE bank");
    for t in ["a", "b"] {
        c.exec(&format!(
            "CREATE TABLE {t} (id INT PRIMARY KEY, bal BIGINT NOT NULL, pad CHAR(100) NOT NULL DEFAULT '')"
        ));
        for chunk in (0..ROWS).collect::<Vec<_>>().chunks(1000) {
            let values: Vec<String> = chunk.iter().map(|i| format!("({i}, 100, 'x')")).collect();
            c.exec(&format!("INSERT INTO {t} VALUES {}", values.join(", ")));
        }
    }
    let total = 2 * ROWS * 100;

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (stop, done, pw) = (stop.clone(), done.clone(), pw.clone());
            std::thread::spawn(move || {
                let mut c = Client::connect(port, "root", &pw).expect("connect");
                c.exec("USE bank");
                let mut n = w;
                while !stop.load(Ordering::Relaxed) {
                    n = n
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let (i, j) = ((n >> 20) as i64 % ROWS, (n >> 40) as i64 % ROWS);
                    c.exec("BEGIN");
                    c.exec(&format!("UPDATE a SET bal = bal - 1 WHERE id = {i}"));
                    c.exec(&format!("UPDATE b SET bal = bal + 1 WHERE id = {j}"));
                    c.exec("COMMIT");
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    let dir = tempfile::tempdir().expect("a temporary directory");
    for round in 0..4 {
        let before = done.load(Ordering::Relaxed);
        let file = dump(dir.path(), port, &pw, "bank", &["--lock-tables"]);
        let target = format!("copy{round}");
        restore(port, &pw, &target, &file);
        c.exec(&format!("USE `{target}`"));
        let sum: i64 = c
            .exec("SELECT (SELECT SUM(bal) FROM a) + (SELECT SUM(bal) FROM b)")
            .scalar()
            .expect("a total")
            .parse()
            .expect("a number");
        assert_eq!(sum, total, "dump {round} is inconsistent");
        std::fs::remove_file(&file).expect("remove the dump");
        assert!(
            done.load(Ordering::Relaxed) > before,
            "no transfer committed during round {round}: the load stopped"
        );
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer thread");
    }
    c.exec("USE bank");
    let live: i64 = c
        .exec("SELECT (SELECT SUM(bal) FROM a) + (SELECT SUM(bal) FROM b)")
        .scalar()
        .expect("a total")
        .parse()
        .expect("a number");
    assert_eq!(live, total);
}
