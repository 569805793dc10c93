//! LOAD DATA [LOCAL] INFILE through the engine API: server-side files under
//! `secure_file_priv`, the LOCAL hand-off (`Error::LocalInfileRequest`, then
//! `Session::finish_local_infile` with a source of the client's packets), field parsing,
//! column lists with user variables and SET, REPLACE / IGNORE, strict mode
//! (atomic, the row number in the error) and the OK packet's info line. The
//! expected values follow MySQL 8.0 (and MariaDB 10.11 where they agree:
//! the mysql-test files `ld_unique_error*_local` run over the wire in
//! canyon-server's `mariadb_suite`).

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, QueryResult, Session, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn engine(dir: Option<&Path>, local: bool) -> Arc<Engine> {
    let mut cfg = common::config(Duration::from_secs(5));
    cfg.secure_file_priv = dir.map(Path::to_path_buf);
    cfg.local_infile = local;
    let e =
        Engine::open(Arc::new(canyon_storage::MemoryStorage::new()), cfg).expect("engine opens");
    e.bootstrap_root("").expect("root account");
    let mut s = e.session(1, "root", "localhost");
    for sql in ["CREATE DATABASE ld", "USE ld"] {
        run(&mut s, sql).expect("setup succeeds");
    }
    e
}

fn session(e: &Arc<Engine>) -> Session {
    let mut s = e.session(2, "root", "localhost");
    run(&mut s, "USE ld").expect("USE succeeds");
    s
}

fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().expect("one result")
}

/// (affected rows, info) of an OK packet.
fn ok(r: Result<QueryResult, Error>) -> (u64, String) {
    match r {
        Ok(QueryResult::Ok {
            affected_rows,
            info,
            ..
        }) => (affected_rows, info),
        other => panic!("expected an OK packet, got {other:?}"),
    }
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match run(s, sql) {
        Ok(QueryResult::Rows { rows, .. }) => rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|v| match v {
                        Value::Null => "NULL".to_string(),
                        v => v.to_display(),
                    })
                    .collect()
            })
            .collect(),
        other => panic!("`{sql}`: expected rows, got {other:?}"),
    }
}

fn warnings(s: &mut Session) -> Vec<(u16, String)> {
    rows(s, "SHOW WARNINGS")
        .into_iter()
        .map(|r| (r[1].parse().expect("a code"), r[2].clone()))
        .collect()
}

fn code(e: &Error) -> u16 {
    match e {
        Error::Sql { code, .. } | Error::StrictModeError { code, .. } => *code,
        Error::DuplicateEntry { .. } => 1062,
        Error::DataTooLong { .. } => 1406,
        other => panic!("unexpected error {other:?}"),
    }
}

/// Runs a LOAD DATA LOCAL through the hand-off, the client sending `data` in
/// `chunk`-byte packets.
fn load_local(s: &mut Session, sql: &str, data: &[u8], chunk: usize) -> Result<QueryResult, Error> {
    match run(s, sql) {
        Err(Error::LocalInfileRequest(_)) => {}
        other => return other,
    }
    let mut pieces = data.chunks(chunk.max(1));
    s.finish_local_infile(&mut |buf: &mut Vec<u8>| {
        Ok(match pieces.next() {
            Some(p) => {
                buf.extend_from_slice(p);
                true
            }
            None => false,
        })
    })
}

fn table(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    rows(s, sql)
}

#[test]
fn server_file_with_every_clause() {
    let dir = tempfile::tempdir().expect("a directory");
    let e = engine(Some(dir.path()), false);
    let mut s = session(&e);
    run(
        &mut s,
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, a VARCHAR(10), b INT, c VARCHAR(20))",
    )
    .expect("create");
    std::fs::write(
        dir.path().join("t.csv"),
        "header line\r\nxxx\"x,1\",10,\"say \"\"hi\"\"\"\r\nskipped line\r\nxxxNULL,20,\\N\r\n",
    )
    .expect("write the file");
    let (affected, info) = ok(run(
        &mut s,
        "LOAD DATA INFILE 't.csv' INTO TABLE t FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' \
         LINES STARTING BY 'xxx' TERMINATED BY '\\r\\n' IGNORE 1 LINES (a, @b, c) SET b = @b * 2",
    ));
    assert_eq!(affected, 2);
    assert_eq!(info, "Records: 2  Deleted: 0  Skipped: 0  Warnings: 0");
    assert_eq!(
        table(&mut s, "SELECT id, a, b, c FROM t ORDER BY id"),
        vec![
            vec!["1", "x,1", "20", "say \"hi\""],
            vec!["2", "NULL", "40", "NULL"],
        ]
    );
    // The user variable keeps the last row's value, as in MySQL.
    assert_eq!(table(&mut s, "SELECT @b"), vec![vec!["20"]]);
    // An absolute path outside secure_file_priv is refused: 1290.
    let e1 = run(&mut s, "LOAD DATA INFILE '/etc/hostname' INTO TABLE t").unwrap_err();
    assert_eq!(code(&e1), 1290);
    // A missing file: 29.
    let e2 = run(&mut s, "LOAD DATA INFILE 'nope.txt' INTO TABLE t").unwrap_err();
    assert_eq!(code(&e2), 29);
}

#[test]
fn server_files_are_refused_without_secure_file_priv_or_file_privilege() {
    let e = engine(None, false);
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE t (a INT)").expect("create");
    let err = run(&mut s, "LOAD DATA INFILE '/tmp/x' INTO TABLE t").unwrap_err();
    assert_eq!(code(&err), 1290);
    let dir = tempfile::tempdir().expect("a directory");
    let e = engine(Some(dir.path()), false);
    let mut root = session(&e);
    run(&mut root, "CREATE TABLE t (a INT)").expect("create");
    run(&mut root, "CREATE USER u").expect("create user");
    run(&mut root, "GRANT INSERT ON ld.* TO u").expect("grant");
    std::fs::write(dir.path().join("f"), "1\n").expect("write");
    let mut u = e.session(3, "u", "localhost");
    run(&mut u, "USE ld").expect("use");
    let err = run(&mut u, "LOAD DATA INFILE 'f' INTO TABLE t").unwrap_err();
    assert!(
        matches!(&err, Error::SpecificAccessDenied(p) if p == "FILE"),
        "{err:?}"
    );
}

#[test]
fn local_needs_both_sides() {
    let e = engine(None, false);
    let mut s = session(&e);
    s.set_client_local_files(true);
    run(&mut s, "CREATE TABLE t (a INT)").expect("create");
    let err = run(&mut s, "LOAD DATA LOCAL INFILE 'x' INTO TABLE t").unwrap_err();
    assert_eq!(code(&err), 3948);
    let e = engine(None, true);
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE t (a INT)").expect("create");
    let err = run(&mut s, "LOAD DATA LOCAL INFILE 'x' INTO TABLE t").unwrap_err();
    assert_eq!(
        code(&err),
        3948,
        "the client did not set CLIENT_LOCAL_FILES"
    );
    s.set_client_local_files(true);
    // The table is checked before the file is asked for.
    let err = run(&mut s, "LOAD DATA LOCAL INFILE 'x' INTO TABLE nope").unwrap_err();
    assert!(matches!(err, Error::UnknownTable { .. }), "{err:?}");
    // Prepared, as MariaDB allows (MySQL 8: 1295): executing it asks for
    // the file as the text does.
    let p = s
        .prepare("LOAD DATA LOCAL INFILE 'x' INTO TABLE t")
        .expect("prepares");
    assert!(matches!(
        s.execute_prepared(p.id, &[]),
        Err(Error::LocalInfileRequest(f)) if f == "x"
    ));
    let mut sent = false;
    let (affected, _) = ok(s.finish_local_infile(&mut |buf: &mut Vec<u8>| {
        if sent {
            return Ok(false);
        }
        sent = true;
        buf.extend_from_slice(b"5\n6\n");
        Ok(true)
    }));
    assert_eq!(affected, 2);
    // A malformed statement fails at PREPARE.
    assert!(s.prepare("LOAD DATA LOCAL INFILE 'x' INTO t").is_err());
}

#[test]
fn local_duplicates_ignore_replace() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    let file = b"1,abc\n2,def\n3,ghi\n3,jkl\n4,opq\n";
    let load = |s: &mut Session, how: &str| {
        run(s, "DROP TABLE IF EXISTS t1").expect("drop");
        run(
            s,
            "CREATE TABLE t1 (c1 INTEGER NOT NULL PRIMARY KEY, c2 TEXT)",
        )
        .expect("create");
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'f' {how} INTO TABLE t1 FIELDS TERMINATED BY ',' \
             LINES TERMINATED BY '\\n'"
        );
        // Packets cut mid-line: the records do not depend on them.
        ok(load_local(s, &sql, file, 7))
    };
    // LOCAL alone is IGNORE: the duplicate is a warning.
    for how in ["", "IGNORE"] {
        let (affected, info) = load(&mut s, how);
        assert_eq!(affected, 4);
        assert_eq!(info, "Records: 5  Deleted: 0  Skipped: 1  Warnings: 1");
        assert_eq!(
            warnings(&mut s),
            // MySQL 8.0.19's form (MariaDB's, under display_widths, drops "t1.").
            vec![(1062, "Duplicate entry '3' for key 't1.PRIMARY'".to_string())]
        );
        assert_eq!(
            table(&mut s, "SELECT c2 FROM t1 ORDER BY c1"),
            vec![vec!["abc"], vec!["def"], vec!["ghi"], vec!["opq"]]
        );
    }
    let (affected, info) = load(&mut s, "REPLACE");
    assert_eq!(affected, 6);
    assert_eq!(info, "Records: 5  Deleted: 1  Skipped: 0  Warnings: 0");
    assert_eq!(
        table(&mut s, "SELECT c2 FROM t1 ORDER BY c1"),
        vec![vec!["abc"], vec!["def"], vec!["jkl"], vec!["opq"]]
    );
}

#[test]
fn server_file_duplicate_is_an_error_and_loads_nothing() {
    let dir = tempfile::tempdir().expect("a directory");
    let e = engine(Some(dir.path()), false);
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE t1 (c1 INT PRIMARY KEY, c2 TEXT)").expect("create");
    std::fs::write(dir.path().join("f"), "1\ta\n2\tb\n1\tc\n").expect("write");
    let err = run(&mut s, "LOAD DATA INFILE 'f' INTO TABLE t1").unwrap_err();
    assert_eq!(code(&err), 1062);
    assert_eq!(table(&mut s, "SELECT COUNT(*) FROM t1"), vec![vec!["0"]]);
}

#[test]
fn strict_mode_errors_name_the_row_and_load_nothing() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    run(&mut s, "CREATE TABLE t (a INT NOT NULL, b VARCHAR(3))").expect("create");
    run(&mut s, "SET sql_mode = 'STRICT_TRANS_TABLES'").expect("strict");
    // LOCAL REPLACE is not IGNORE: strict mode stops at the bad row.
    let cases: &[(&[u8], u16, &str)] = &[
        (b"1\tx\n2\ty\nzz\tw\n", 1366, "at row 3"),
        (
            b"1\tx\n2\n",
            1261,
            "Row 2 doesn't contain data for all columns",
        ),
        (b"1\tx\t9\n", 1262, "Row 1 was truncated"),
        (b"1\tx\n\\N\ty\n", 1263, "at row 2"),
        (b"1\tlong\n", 1406, "row: 1"),
        (b"7x\ta\n", 1265, "at row 1"),
    ];
    for (data, want, text) in cases {
        let err = load_local(
            &mut s,
            "LOAD DATA LOCAL INFILE 'f' REPLACE INTO TABLE t",
            data,
            64,
        )
        .unwrap_err();
        assert_eq!(code(&err), *want, "{err:?}");
        assert!(
            err.to_string().contains(text) || format!("{err:?}").contains(text),
            "{err:?}"
        );
        assert_eq!(table(&mut s, "SELECT COUNT(*) FROM t"), vec![vec!["0"]]);
    }
    // LOCAL without REPLACE is IGNORE: the same file loads with warnings.
    let (affected, info) = ok(load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' INTO TABLE t",
        b"1\tx\nzz\tw\n3\n4\tlong\t9\n\\N\tq\n",
        3,
    ));
    assert_eq!(affected, 5);
    assert_eq!(info, "Records: 5  Deleted: 0  Skipped: 0  Warnings: 5");
    let codes: Vec<u16> = warnings(&mut s).into_iter().map(|w| w.0).collect();
    assert_eq!(codes, vec![1366, 1261, 1265, 1262, 1263]);
    assert_eq!(
        table(&mut s, "SELECT a, b FROM t"),
        vec![
            vec!["1", "x"],
            vec!["0", "w"],
            vec!["3", "NULL"],
            vec!["4", "lon"],
            vec!["0", "q"],
        ]
    );
}

#[test]
fn set_expressions_with_user_variables() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    run(
        &mut s,
        "CREATE TABLE t1 (c1 INTEGER NOT NULL PRIMARY KEY, c2 TEXT)",
    )
    .expect("create");
    let (affected, _) = ok(load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' REPLACE INTO TABLE t1 FIELDS TERMINATED BY ',' \
         (@c1,c2) SET c1 = @c1 % 2",
        b"1,abc\n2,def\n3,ghi\n3,jkl\n4,opq\n",
        100,
    ));
    // 5 inserted, 3 of them replacing a row.
    assert_eq!(affected, 8);
    assert_eq!(
        table(&mut s, "SELECT c1, c2 FROM t1 ORDER BY c1"),
        vec![vec!["0", "opq"], vec!["1", "jkl"]]
    );
    // SET giving NULL to a NOT NULL column: warning 1048 and the type's
    // zero under IGNORE (LOCAL), the error 1048 in strict mode.
    run(
        &mut s,
        "CREATE TABLE n (a INT PRIMARY KEY, b VARCHAR(5) NOT NULL)",
    )
    .expect("create");
    let (_, info) = ok(load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' INTO TABLE n (a) SET b = CONCAT(@nothing, 'x')",
        b"1\n",
        10,
    ));
    assert_eq!(info, "Records: 1  Deleted: 0  Skipped: 0  Warnings: 1");
    assert_eq!(
        warnings(&mut s),
        vec![(1048, "Column 'b' cannot be null".to_string())]
    );
    assert_eq!(table(&mut s, "SELECT a, b FROM n"), vec![vec!["1", ""]]);
    run(&mut s, "SET sql_mode = 'STRICT_TRANS_TABLES'").expect("strict");
    let err = load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' REPLACE INTO TABLE n (a) SET b = NULL",
        b"2\n",
        10,
    )
    .unwrap_err();
    assert!(matches!(err, Error::BadNull(_)), "{err:?}");
    // An unknown column in the list: 1054, before any transfer.
    let err = run(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' INTO TABLE t1 (c1, nope)",
    )
    .unwrap_err();
    assert!(matches!(err, Error::UnknownColumn { .. }), "{err:?}");
    let err = run(&mut s, "LOAD DATA LOCAL INFILE 'f' INTO TABLE t1 (c1, c1)").unwrap_err();
    assert!(matches!(err, Error::ColumnSpecifiedTwice(_)), "{err:?}");
}

#[test]
fn inside_a_transaction_the_load_rolls_back_with_it() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    run(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)").expect("create");
    run(&mut s, "BEGIN").expect("begin");
    ok(load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' INTO TABLE t",
        b"1\n2\n",
        1,
    ));
    assert_eq!(table(&mut s, "SELECT COUNT(*) FROM t"), vec![vec!["2"]]);
    run(&mut s, "ROLLBACK").expect("rollback");
    assert_eq!(table(&mut s, "SELECT COUNT(*) FROM t"), vec![vec!["0"]]);
}

#[test]
fn a_transfer_that_breaks_loads_nothing() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    run(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)").expect("create");
    assert!(matches!(
        run(&mut s, "LOAD DATA LOCAL INFILE 'f' INTO TABLE t"),
        Err(Error::LocalInfileRequest(_))
    ));
    // Rows of the first packets are inserted as they come; the source
    // fails (the client went away) and the statement rolls back whole.
    let mut calls = 0;
    let err = s
        .finish_local_infile(&mut |buf: &mut Vec<u8>| {
            calls += 1;
            if calls > 3 {
                return Err(Error::Io("connection lost".into()));
            }
            buf.extend_from_slice(format!("{calls}\n").as_bytes());
            Ok(true)
        })
        .unwrap_err();
    assert!(matches!(err, Error::Io(_)), "{err:?}");
    assert_eq!(table(&mut s, "SELECT COUNT(*) FROM t"), vec![vec!["0"]]);
}

// ---------------------------------------------------------------------------
// Loads larger than canyon-txn's bulk-commit threshold (`BULK_ROWS`, 4096
// rows): the commit drops the written rows' row-cache entries instead of
// caching them, and sorts the batch's index entries. These check that what
// a bulk commit stores and shows is what any commit would: the rows, both
// indexes, old versions for older snapshots, the cache, and all-or-nothing.
// ---------------------------------------------------------------------------

/// Rows (id, k, c) in the default format: id from `from` to `to`, k = id
/// mod 97 (a secondary index of many pks per value), c names the file.
fn bulk_file(from: u64, to: u64, tag: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for id in from..=to {
        out.extend_from_slice(format!("{id}\t{}\t{tag}{id}\n", id % 97).as_bytes());
    }
    out
}

fn bulk_table(s: &mut Session) {
    run(s, "DROP TABLE IF EXISTS b").expect("drop");
    run(
        s,
        "CREATE TABLE b (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c VARCHAR(20), \
         KEY k_1 (k))",
    )
    .expect("create");
}

fn count(s: &mut Session, sql: &str) -> String {
    table(s, sql)[0][0].clone()
}

#[test]
fn bulk_load_into_empty_then_nonempty_table_keeps_rows_indexes_and_cache() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    bulk_table(&mut s);
    let sql = "LOAD DATA LOCAL INFILE 'f' INTO TABLE b";
    let (affected, info) = ok(load_local(&mut s, sql, &bulk_file(1, 10_000, "a"), 4096));
    assert_eq!(affected, 10_000);
    assert_eq!(info, "Records: 10000  Deleted: 0  Skipped: 0  Warnings: 0");
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM b"), "10000");
    // The secondary index holds every row: 10,000 / 97 rows per value.
    let k5 = (1..=10_000u64)
        .filter(|id| id % 97 == 5)
        .count()
        .to_string();
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k = 5"
        ),
        k5
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k >= 0"
        ),
        "10000"
    );
    // Rows read now are in the row cache; the next bulk load replaces them.
    assert_eq!(
        table(&mut s, "SELECT c FROM b WHERE id IN (7, 9000) ORDER BY id"),
        vec![vec!["a7"], vec!["a9000"]]
    );
    // A second session's snapshot, taken before the REPLACE, keeps the old
    // versions (History) while the new ones are committed.
    let mut other = session(&e);
    run(&mut other, "START TRANSACTION WITH CONSISTENT SNAPSHOT").expect("snapshot");
    // Into the non-empty table: ids 5,001..15,000 with REPLACE, half of them
    // replacing rows, with k changed for the replaced ones (k = id mod 97
    // again, but the file's k is shifted by one below).
    let mut file = Vec::new();
    for id in 5_001..=15_000u64 {
        file.extend_from_slice(format!("{id}\t{}\tr{id}\n", (id + 1) % 97).as_bytes());
    }
    let (affected, info) = ok(load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' REPLACE INTO TABLE b",
        &file,
        1000,
    ));
    assert_eq!(
        info,
        "Records: 10000  Deleted: 5000  Skipped: 0  Warnings: 0"
    );
    assert_eq!(affected, 15_000);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM b"), "15000");
    assert_eq!(
        table(
            &mut s,
            "SELECT c, k FROM b WHERE id IN (7, 9000) ORDER BY id"
        ),
        vec![vec!["a7", "7"], vec!["r9000", "77"]]
    );
    // Index entries of replaced rows moved: ids 1..5000 keep k = id mod 97,
    // ids 5001..15000 have k = (id + 1) mod 97.
    let by_index = count(
        &mut s,
        "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k = 5",
    );
    let by_scan = count(
        &mut s,
        "SELECT COUNT(*) FROM b IGNORE INDEX (k_1) WHERE k = 5",
    );
    assert_eq!(by_index, by_scan);
    let expected = (1..=5_000u64).filter(|id| id % 97 == 5).count()
        + (5_001..=15_000u64).filter(|id| (id + 1) % 97 == 5).count();
    assert_eq!(by_index, expected.to_string());
    // The snapshot still reads the table as it was, by the primary key and
    // through the index.
    assert_eq!(count(&mut other, "SELECT COUNT(*) FROM b"), "10000");
    assert_eq!(
        table(&mut other, "SELECT c, k FROM b WHERE id = 9000"),
        vec![vec!["a9000", "76"]]
    );
    assert_eq!(
        count(
            &mut other,
            "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k = 5"
        ),
        k5
    );
    run(&mut other, "COMMIT").expect("commit");
    assert_eq!(count(&mut other, "SELECT COUNT(*) FROM b"), "15000");
}

#[test]
fn bulk_load_duplicate_in_the_middle_error_ignore_replace() {
    let dir = tempfile::tempdir().expect("a directory");
    let e = engine(Some(dir.path()), false);
    let mut s = session(&e);
    bulk_table(&mut s);
    // Row 6,000 of the file repeats id 3,000.
    let mut file = bulk_file(1, 5_999, "a");
    file.extend_from_slice(b"3000\t1\tdup\n");
    file.extend_from_slice(&bulk_file(6_000, 9_999, "a"));
    std::fs::write(dir.path().join("f"), &file).expect("write");
    // No IGNORE, a server file: error 1062, and nothing is loaded.
    let err = run(&mut s, "LOAD DATA INFILE 'f' INTO TABLE b").unwrap_err();
    assert_eq!(code(&err), 1062, "{err:?}");
    assert!(
        matches!(&err, Error::DuplicateEntry { value, key } if value == "3000" && key == "b.PRIMARY"),
        "{err:?}"
    );
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM b"), "0");
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k >= 0"
        ),
        "0"
    );
    // IGNORE: the duplicate is skipped with warning 1062, the first row stays.
    let (affected, info) = ok(run(&mut s, "LOAD DATA INFILE 'f' IGNORE INTO TABLE b"));
    assert_eq!(affected, 9_999);
    assert_eq!(info, "Records: 10000  Deleted: 0  Skipped: 1  Warnings: 1");
    assert_eq!(
        warnings(&mut s),
        vec![(
            1062,
            "Duplicate entry '3000' for key 'b.PRIMARY'".to_string()
        )]
    );
    assert_eq!(
        table(&mut s, "SELECT k, c FROM b WHERE id = 3000"),
        vec![vec!["90", "a3000"]]
    );
    // REPLACE into the emptied table: the later row wins, its index entry
    // too (k = 1), the earlier one's (k = 90) is gone.
    bulk_table(&mut s);
    let (affected, info) = ok(run(&mut s, "LOAD DATA INFILE 'f' REPLACE INTO TABLE b"));
    assert_eq!(info, "Records: 10000  Deleted: 1  Skipped: 0  Warnings: 0");
    assert_eq!(affected, 10_001);
    assert_eq!(
        table(&mut s, "SELECT k, c FROM b WHERE id = 3000"),
        vec![vec!["1", "dup"]]
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k = 90 AND id = 3000"
        ),
        "0"
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k >= 0"
        ),
        "9999"
    );
}

#[test]
fn bulk_load_error_leaves_the_table_as_it_was() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    bulk_table(&mut s);
    ok(load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' INTO TABLE b",
        &bulk_file(1, 100, "a"),
        512,
    ));
    run(&mut s, "SET sql_mode = 'STRICT_TRANS_TABLES'").expect("strict");
    // LOCAL REPLACE stops at a bad value: row 8,000 has k = 'zz'.
    let mut file = bulk_file(50, 8_048, "b");
    file.extend_from_slice(b"9000\tzz\tbad\n");
    file.extend_from_slice(&bulk_file(9_001, 9_500, "b"));
    let err = load_local(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f' REPLACE INTO TABLE b",
        &file,
        4096,
    )
    .unwrap_err();
    assert_eq!(code(&err), 1366, "{err:?}");
    assert!(err.to_string().contains("at row 8000"), "{err}");
    // The first load's rows, as they were, and nothing of the second.
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM b"), "100");
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k >= 0"
        ),
        "100"
    );
    assert_eq!(
        table(&mut s, "SELECT c FROM b WHERE id = 60"),
        vec![vec!["a60"]]
    );
    // A connection lost half way through a bulk transfer: nothing either.
    assert!(matches!(
        run(&mut s, "LOAD DATA LOCAL INFILE 'f' INTO TABLE b"),
        Err(Error::LocalInfileRequest(_))
    ));
    let mut pieces = bulk_file(1_000, 20_000, "c")
        .chunks(4096)
        .map(<[u8]>::to_vec)
        .collect::<Vec<_>>()
        .into_iter();
    let mut sent = 0;
    let err = s
        .finish_local_infile(&mut |buf: &mut Vec<u8>| {
            sent += 1;
            if sent > 30 {
                return Err(Error::Io("connection lost".into()));
            }
            match pieces.next() {
                Some(p) => {
                    buf.extend_from_slice(&p);
                    Ok(true)
                }
                None => Ok(false),
            }
        })
        .unwrap_err();
    assert!(matches!(err, Error::Io(_)), "{err:?}");
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM b"), "100");
}

#[test]
fn another_session_during_a_bulk_load_sees_none_of_it() {
    let e = engine(None, true);
    let mut s = session(&e);
    s.set_client_local_files(true);
    bulk_table(&mut s);
    run(&mut s, "INSERT INTO b VALUES (1, 1, 'before')").expect("insert");
    let mut other = session(&e);
    assert!(matches!(
        run(&mut s, "LOAD DATA LOCAL INFILE 'f' REPLACE INTO TABLE b"),
        Err(Error::LocalInfileRequest(_))
    ));
    let mut pieces = bulk_file(1, 12_000, "a")
        .chunks(2048)
        .map(<[u8]>::to_vec)
        .collect::<Vec<_>>()
        .into_iter();
    // Between the client's packets (thousands of rows already in the load's
    // write buffer) the other session reads: autocommit statements, each
    // with a fresh snapshot, by the primary key and through the index.
    let mut seen = Vec::new();
    ok(
        s.finish_local_infile(&mut |buf: &mut Vec<u8>| match pieces.next() {
            Some(p) => {
                seen.push((
                    count(&mut other, "SELECT COUNT(*) FROM b"),
                    count(
                        &mut other,
                        "SELECT COUNT(*) FROM b FORCE INDEX (k_1) WHERE k >= 0",
                    ),
                    table(&mut other, "SELECT c FROM b WHERE id = 1")[0][0].clone(),
                ));
                buf.extend_from_slice(&p);
                Ok(true)
            }
            None => Ok(false),
        }),
    );
    assert!(seen.len() > 20);
    for s in &seen {
        assert_eq!(s, &("1".to_string(), "1".to_string(), "before".to_string()));
    }
    assert_eq!(count(&mut other, "SELECT COUNT(*) FROM b"), "12000");
    assert_eq!(
        table(&mut other, "SELECT c FROM b WHERE id = 1"),
        vec![vec!["a1"]]
    );
}
