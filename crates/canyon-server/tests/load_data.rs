//! LOAD DATA LOCAL over the wire with the real `mariadb --local-infile=1`
//! client (the protocol's LOCAL INFILE request, the file's packets, the
//! empty packet, then the OK with MySQL's info line), the refusals when
//! either side has it off (3948), a malformed file in strict mode (nothing
//! loaded, the row named), a server-side file under `secure_file_priv`, and
//! `mariadb-import` (mysqlimport), which issues LOAD DATA [LOCAL] itself.

mod common;

use common::{find_program, mariadb_cli_args, run_bounded, skip_without, Server, ServerOptions};
use std::process::Command;

fn server(extra: &str) -> Server {
    Server::start_with(ServerOptions {
        in_memory: true,
        extra_toml: extra.into(),
        ..Default::default()
    })
}

/// Runs `sql` with `mariadb --local-infile=1` (`=0` without `local`), in
/// batch mode, or with `-vvv` when `sql` holds a LOAD DATA (so the OK
/// packet's info line is printed); panics on failure unless `may_fail`.
fn cli(s: &Server, sql: &str, local: bool, may_fail: bool) -> (String, String) {
    let flag = if local {
        "--local-infile=1"
    } else {
        "--local-infile=0"
    };
    let verbose: &[&str] = if sql.contains("LOAD DATA") {
        &["-vvv"]
    } else {
        &[]
    };
    let args: Vec<&str> = [flag].into_iter().chain(verbose.iter().copied()).collect();
    let o = mariadb_cli_args(s.port(), s.password(), None, sql, &args);
    if !may_fail {
        assert!(
            o.status.success(),
            "mariadb failed on:\n{sql}\nstderr: {}\nstdout: {}",
            o.stderr,
            o.stdout
        );
    }
    (o.stdout, o.stderr)
}

#[test]
fn load_data_local_with_the_mariadb_client() {
    if skip_without("mariadb") {
        return;
    }
    let s = server("local_infile = true\n");
    let dir = tempfile::tempdir().expect("a directory");
    let good = dir.path().join("good.csv");
    // 2,000 rows: more than one packet of the client's (it sends the file in
    // pieces), quoted fields, a NULL and an escaped tab.
    let mut data = String::from("id,name,qty\n");
    for i in 1..=2000 {
        data.push_str(&format!("{i},\"name, {i}\",{}\n", i * 2));
    }
    data.push_str("2001,\\N,\\N\n2002,\"tab\\there\",7\n");
    std::fs::write(&good, &data).expect("write the file");
    let (out, _) = cli(
        &s,
        &format!(
            "CREATE DATABASE ld; USE ld;
             CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), qty INT);
             LOAD DATA LOCAL INFILE '{}' INTO TABLE t FIELDS TERMINATED BY ','
               OPTIONALLY ENCLOSED BY '\"' IGNORE 1 LINES;",
            good.display()
        ),
        true,
        false,
    );
    assert!(
        out.contains("Records: 2002  Deleted: 0  Skipped: 0  Warnings: 0"),
        "{out}"
    );
    let (out, _) = cli(
        &s,
        "SELECT COUNT(*), SUM(qty), MAX(name) FROM ld.t WHERE id <= 2000;
         SELECT id, name, qty FROM ld.t WHERE id >= 2001 ORDER BY id;",
        true,
        false,
    );
    assert!(out.contains("2000\t4002000\tname, 999"), "{out}");
    assert!(out.contains("2001\tNULL\tNULL"), "{out}");
    assert!(out.contains("2002\ttab\there\t7"), "{out}");

    // Strict mode: a bad value on line 3 of the file (row 3) fails the
    // statement and loads nothing. (LOCAL without REPLACE is IGNORE in
    // MySQL 8, which turns the error into a warning: REPLACE keeps it an
    // error.)
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "1\ta\n2\tb\nthree\tc\n4\td\n").expect("write the file");
    let (out, err) = cli(
        &s,
        &format!(
            "USE ld; SET sql_mode = 'STRICT_TRANS_TABLES';
             CREATE TABLE s (id INT PRIMARY KEY, v CHAR(1));
             LOAD DATA LOCAL INFILE '{}' REPLACE INTO TABLE s;",
            bad.display()
        ),
        true,
        true,
    );
    assert!(
        err.contains("ERROR 1366") && err.contains("at row 3"),
        "stdout: {out}\nstderr: {err}"
    );
    let (out, _) = cli(&s, "SELECT COUNT(*) FROM ld.s", true, false);
    assert!(out.contains("\n0\n"), "{out}");
    // The same file without REPLACE: warnings, the bad row stored as 0.
    let (out, _) = cli(
        &s,
        &format!(
            "USE ld; SET sql_mode = 'STRICT_TRANS_TABLES';
             LOAD DATA LOCAL INFILE '{}' INTO TABLE s; SHOW WARNINGS;",
            bad.display()
        ),
        true,
        false,
    );
    assert!(
        out.contains("Records: 4  Deleted: 0  Skipped: 0  Warnings: 1"),
        "{out}"
    );
    assert!(
        out.contains("Incorrect integer value: 'three' for column 'id' at row 3"),
        "{out}"
    );

    // The client without --local-infile: 3948, and nothing is asked for.
    let (_, err) = cli(
        &s,
        &format!("LOAD DATA LOCAL INFILE '{}' INTO TABLE ld.s", bad.display()),
        false,
        true,
    );
    assert!(err.contains("ERROR 3948"), "{err}");
}

#[test]
fn local_infile_off_on_the_server_refuses() {
    if skip_without("mariadb") {
        return;
    }
    let s = server("");
    let (_, err) = cli(
        &s,
        "CREATE DATABASE ld; CREATE TABLE ld.t (a INT);
         LOAD DATA LOCAL INFILE '/dev/null' INTO TABLE ld.t;",
        true,
        true,
    );
    assert!(err.contains("ERROR 3948"), "{err}");
    // Server-side files: secure_file_priv is NULL by default: 1290.
    let (_, err) = cli(
        &s,
        "LOAD DATA INFILE '/dev/null' INTO TABLE ld.t;",
        true,
        true,
    );
    assert!(err.contains("ERROR 1290"), "{err}");
}

#[test]
fn server_side_file_and_mariadb_import() {
    if skip_without("mariadb") {
        return;
    }
    let dir = tempfile::tempdir().expect("a directory");
    let s = server(&format!(
        "local_infile = true\nsecure_file_priv = \"{}\"\n",
        dir.path().display()
    ));
    std::fs::write(dir.path().join("t.txt"), "1\tone\n2\ttwo\n").expect("write");
    let (out, _) = cli(
        &s,
        "CREATE DATABASE imp; USE imp; CREATE TABLE t (a INT PRIMARY KEY, b TEXT);
         LOAD DATA INFILE 't.txt' INTO TABLE t;",
        false,
        false,
    );
    assert!(
        out.contains("Records: 2  Deleted: 0  Skipped: 0  Warnings: 0"),
        "{out}"
    );
    let (out, _) = cli(&s, "SELECT a, b FROM imp.t ORDER BY a", false, false);
    assert!(out.contains("1\tone\n2\ttwo"), "{out}");
    // mariadb-import names the table after the file: items.txt -> items.
    let Some(import) = find_program("mariadb-import").or_else(|| find_program("mysqlimport"))
    else {
        eprintln!("mariadb-import is not installed: its part is skipped");
        return;
    };
    let other = tempfile::tempdir().expect("a directory");
    let file = other.path().join("items.txt");
    std::fs::write(&file, "10\tx\n11\ty\n12\tz\n").expect("write");
    cli(
        &s,
        "CREATE TABLE imp.items (a INT PRIMARY KEY, b TEXT)",
        false,
        false,
    );
    let o = run_bounded(
        Command::new(import)
            .arg("--no-defaults")
            .arg("--protocol=TCP")
            .arg("-h127.0.0.1")
            .arg(format!("-P{}", s.port()))
            .arg("-uroot")
            .arg(format!("-p{}", s.password()))
            .arg("--local")
            .arg("imp")
            .arg(&file),
        "",
        common::CLIENT_TIMEOUT,
    );
    assert!(
        o.status.success(),
        "mariadb-import: {}\n{}",
        o.stdout,
        o.stderr
    );
    assert!(o.stdout.contains("Records: 3"), "{}", o.stdout);
    let (out, _) = cli(&s, "SELECT COUNT(*) FROM imp.items", false, false);
    assert!(out.contains("\n3\n"), "{out}");
}

/// SELECT ... INTO OUTFILE writes what LOAD DATA INFILE reads back with the
/// same FIELDS / LINES clauses (escapes, enclosures, NULL, a tab and a
/// newline inside values), never overwrites a file (1086), stays under
/// `secure_file_priv` (1290 for `..` out of it), and INTO DUMPFILE writes
/// one row's bytes unescaped (1172 for more rows).
#[test]
fn select_into_outfile_round_trips_through_load_data() {
    if skip_without("mariadb") {
        return;
    }
    let dir = tempfile::tempdir().expect("a directory");
    let s = server(&format!(
        "secure_file_priv = \"{}\"\n",
        dir.path().display()
    ));
    cli(
        &s,
        "CREATE DATABASE o; USE o;
         CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(20), c DECIMAL(6,2), d DATE);
         INSERT INTO t VALUES (1, 'plain', 1.5, '2026-01-02'), (2, 'tab\\there', NULL, NULL),
           (3, 'quote\"and\\\\slash', -2, '2026-12-31'), (4, 'line\\nbreak,comma', 0, NULL);
         CREATE TABLE u LIKE t; CREATE TABLE v LIKE t;",
        false,
        false,
    );
    let (out, _) = cli(
        &s,
        "SELECT * FROM o.t ORDER BY a INTO OUTFILE 'plain.txt';
         SELECT * FROM o.t ORDER BY a INTO OUTFILE 'csv.txt'
           FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n';",
        false,
        false,
    );
    assert!(out.is_empty(), "{out}");
    let plain = std::fs::read_to_string(dir.path().join("plain.txt")).expect("plain.txt");
    assert_eq!(
        plain,
        "1\tplain\t1.50\t2026-01-02\n2\ttab\\\there\t\\N\t\\N\n\
         3\tquote\"and\\\\slash\t-2.00\t2026-12-31\n4\tline\\\nbreak,comma\t0.00\t\\N\n"
    );
    let csv = std::fs::read_to_string(dir.path().join("csv.txt")).expect("csv.txt");
    // OPTIONALLY: numbers bare, strings and dates enclosed; CR LF lines.
    assert!(
        csv.starts_with("1,\"plain\",1.50,\"2026-01-02\"\r\n2,"),
        "{csv}"
    );
    assert!(csv.contains("\"quote\\\"and\\\\slash\""), "{csv}");
    cli(
        &s,
        "USE o; LOAD DATA INFILE 'plain.txt' INTO TABLE u;
         LOAD DATA INFILE 'csv.txt' INTO TABLE v
           FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n';",
        false,
        false,
    );
    let (same, _) = cli(
        &s,
        "SELECT (SELECT COUNT(*) FROM o.t NATURAL JOIN o.u), (SELECT COUNT(*) FROM o.t NATURAL JOIN o.v),
                (SELECT COUNT(*) FROM o.u WHERE c IS NULL AND d IS NULL)",
        false,
        false,
    );
    // NATURAL JOIN compares every column; NULLs never join, so rows 2 and
    // 4 (NULL in c or d) are counted by the last query instead.
    assert!(same.contains("2\t2\t1"), "{same}");
    let (_, err) = cli(&s, "SELECT 1 INTO OUTFILE 'plain.txt'", false, true);
    assert!(err.contains("ERROR 1086"), "{err}");
    let (_, err) = cli(&s, "SELECT 1 INTO OUTFILE '../escaped.txt'", false, true);
    assert!(err.contains("ERROR 1290"), "{err}");
    cli(
        &s,
        "SELECT b, a INTO DUMPFILE 'dump.bin' FROM o.t WHERE a = 2",
        false,
        false,
    );
    assert_eq!(
        std::fs::read(dir.path().join("dump.bin")).expect("dump.bin"),
        b"tab\there2"
    );
    let (_, err) = cli(&s, "SELECT a INTO DUMPFILE 'two.bin' FROM o.t", false, true);
    assert!(err.contains("ERROR 1172"), "{err}");
}
