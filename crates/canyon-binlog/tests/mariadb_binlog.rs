//! Files written with this crate, read by the real `mariadb-binlog`
//! (Debian's MariaDB 10.11 client). Skipped, with a printed reason, only
//! where the program is missing.

mod common;

use std::path::Path;
use std::process::Command;

use canyon_binlog::control::{
    flags2, format_description_for, Flavor, MARIADB_FL_ALLOW_PARALLEL, MARIADB_FL_DDL,
    MARIADB_FL_STANDALONE, MARIADB_FL_TRANSACTIONAL,
};
use canyon_binlog::gtid::parse_uuid;
use canyon_binlog::{
    format_description, gtid, previous_gtids, query, rotate, table_map, xid, BinValue, ColumnMeta,
    EventType, Gtid, GtidSet, QueryEvent, RowsEventBuilder, RowsKind,
};
use common::{mariadb_types, printed, LogWriter};

const MARIADB_BINLOG: &str = "/usr/bin/mariadb-binlog";
const UUID: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

/// The table of [`mariadb_types`], as MariaDB creates it.
const CREATE_EVERY_TYPE: &str = "CREATE TABLE every_type (id INT NOT NULL PRIMARY KEY, \
    ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, mu MEDIUMINT UNSIGNED, \
    iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, dc DECIMAL(10,2), \
    dw DECIMAL(30,10), y YEAR, dt DATE, tm TIME(3), t0 TIME, dtm DATETIME(6), dt0 DATETIME, \
    ts TIMESTAMP(2) NULL, vc VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, \
    vb VARBINARY(300), ch CHAR(10) CHARACTER SET latin1, \
    cw CHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, bt BIT(10), \
    e ENUM('red','green','blue') CHARACTER SET latin1, s SET('x','y','z') CHARACTER SET latin1, \
    bl BLOB, tx LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, g GEOMETRY, n INT)";

fn tool() -> Option<&'static str> {
    if Path::new(MARIADB_BINLOG).exists() {
        Some(MARIADB_BINLOG)
    } else {
        eprintln!("SKIPPED: {MARIADB_BINLOG} is not installed (apt-get install mariadb-client)");
        None
    }
}

/// Runs mariadb-binlog with `args` on `file`; returns stdout, failing the
/// test on a non-zero exit or anything on stderr.
fn run(tool: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(tool)
        .args(args)
        .arg(file)
        .env("TZ", "UTC")
        .output()
        .expect("mariadb-binlog runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "mariadb-binlog {args:?} failed: {}\nstderr: {stderr}\nstdout: {stdout}",
        out.status
    );
    stdout
}

fn begin(db: &str) -> QueryEvent {
    QueryEvent {
        thread_id: 12,
        db: db.into(),
        sql: b"BEGIN".to_vec(),
        flags2: Some(0),
        sql_mode: Some(0),
        catalog: true,
        charset: Some((45, 45, 45)),
        ..QueryEvent::default()
    }
}

fn ddl(db: &str, sql: &str) -> QueryEvent {
    QueryEvent {
        sql: sql.as_bytes().to_vec(),
        updated_db_names: Some(vec![db.into()]),
        explicit_defaults_for_timestamp: Some(true),
        ddl_xid: Some(50),
        default_collation_for_utf8mb4: Some(255),
        ..begin(db)
    }
}

struct Written {
    dir: tempfile::TempDir,
    log: LogWriter,
}

/// Writes the file; with CANYON_BINLOG_KEEP=DIR set, also a copy into DIR
/// (to look at it with mariadb-binlog --hexdump by hand).
fn keep(written: Written) -> Written {
    std::fs::write(written.path(), &written.log.buf).expect("write log");
    if let Ok(dir) = std::env::var("CANYON_BINLOG_KEEP") {
        let name = format!("{}-{}", written.log.buf.len(), "canyon-bin.000001");
        std::fs::write(Path::new(&dir).join(name), &written.log.buf).expect("keep a copy");
    }
    written
}

impl Written {
    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("canyon-bin.000001")
    }
}

/// The MySQL-flavour file: FORMAT_DESCRIPTION, PREVIOUS_GTIDS, a DDL, a
/// transaction inserting, updating and deleting rows of every type, ROTATE.
fn mysql_flavour_file() -> Written {
    let sid = parse_uuid(UUID).expect("uuid");
    let mut w = LogWriter::new(true);
    w.push(
        EventType::FORMAT_DESCRIPTION,
        0,
        &format_description("8.0.36-canyon", true),
    );
    let mut prev = GtidSet::new();
    prev.add_interval(sid, 1, 2).expect("valid");
    w.push(EventType::PREVIOUS_GTIDS, 0, &previous_gtids(&prev));

    let g = |gno: u64, seq: i64, sbr: bool| Gtid {
        sid,
        gno,
        last_committed: seq - 1,
        sequence_number: seq,
        immediate_commit_ts_us: u64::from(common::TS) * 1_000_000,
        original_commit_ts_us: u64::from(common::TS) * 1_000_000,
        transaction_length: 0,
        immediate_server_version: 80036,
        original_server_version: 80036,
        may_have_sbr: sbr,
    };
    w.push(EventType::GTID, 0, &gtid(&g(3, 1, true)));
    let create_db = QueryEvent {
        updated_db_names: Some(vec!["shop".into()]),
        ..ddl("", "CREATE DATABASE shop")
    };
    w.push(EventType::QUERY, 0, &query(&create_db).expect("encodes"));
    w.push(EventType::GTID, 0, &gtid(&g(4, 2, true)));
    w.push(
        EventType::QUERY,
        0,
        &query(&ddl("shop", CREATE_EVERY_TYPE)).expect("encodes"),
    );

    // One transaction: insert rows 1 and 2, update row 2 (ti 127 -> 0),
    // delete row 1; row 2 as updated is what remains.
    let table = mariadb_types();
    let cols: Vec<ColumnMeta> = table.iter().map(|(c, _, _)| c.clone()).collect();
    let row: Vec<BinValue> = table.iter().map(|(_, v, _)| v.clone()).collect();
    let mut row2 = row.clone();
    row2[0] = BinValue::Int(2);
    row2[1] = BinValue::Int(127);
    let mut row2_updated = row2.clone();
    row2_updated[1] = BinValue::Int(0);
    w.push(EventType::GTID, 0, &gtid(&g(5, 3, false)));
    w.push(
        EventType::QUERY,
        0,
        &query(&begin("shop")).expect("encodes"),
    );
    let tm = table_map(108, "shop", "every_type", &cols).expect("encodes");
    for (kind, images) in [
        (
            RowsKind::Write,
            vec![(None, Some(&row)), (None, Some(&row2))],
        ),
        (RowsKind::Update, vec![(Some(&row2), Some(&row2_updated))]),
        (RowsKind::Delete, vec![(Some(&row), None)]),
    ] {
        w.push(EventType::TABLE_MAP, 0, &tm);
        let mut b = RowsEventBuilder::new(kind, 108, &cols);
        for (before, after) in images {
            b.push(before.map(|r| r.as_slice()), after.map(|r| r.as_slice()))
                .expect("row encodes");
        }
        w.push(kind.event_type(), 0, &b.finish(true));
    }
    w.push(EventType::XID, 0, &xid(77));
    w.push(EventType::ROTATE, 0, &rotate(4, "canyon-bin.000002"));
    let dir = tempfile::tempdir().expect("tempdir");
    keep(Written { dir, log: w })
}

/// Every event's `# at START`, and the `end_log_pos END` of every event
/// header line, in file order. (mariadb-binlog prints an ANNOTATE_ROWS
/// together with the TABLE_MAP after it: both `# at` lines first, then both
/// headers, so the two are checked as separate sequences.)
fn assert_positions(out: &str, log: &LogWriter) {
    let starts: Vec<u64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("# at "))
        .map(|n| n.trim().parse().expect("a position"))
        .collect();
    let ends: Vec<u64> = out
        .lines()
        .filter(|l| l.starts_with('#') && l.contains(" server id 7  end_log_pos "))
        .map(|l| {
            let rest = &l[l.find("end_log_pos ").expect("found") + 12..];
            rest.split_whitespace()
                .next()
                .expect("number")
                .parse()
                .expect("a position")
        })
        .collect();
    let want_starts: Vec<u64> = log.events.iter().map(|e| e.0).collect();
    let want_ends: Vec<u64> = log.events.iter().map(|e| e.1).collect();
    assert_eq!(starts, want_starts, "'# at' positions in:\n{out}");
    assert_eq!(ends, want_ends, "end_log_pos values in:\n{out}");
}

#[test]
fn mariadb_binlog_reads_a_mysql_flavour_file() {
    let Some(tool) = tool() else { return };
    let f = mysql_flavour_file();
    let out = run(tool, &["--base64-output=decode-rows", "-vv"], &f.path());
    println!("{out}");
    assert_positions(&out, &f.log);
    assert!(
        out.contains("Start: binlog v 4, server v 8.0.36-canyon"),
        "{out}"
    );
    assert!(out.contains("CRC32 0x"), "checksums are shown");
    assert!(out.contains(CREATE_EVERY_TYPE), "{out}");
    assert!(out.contains("\nCREATE DATABASE shop\n"), "{out}");
    assert!(out.contains("\nBEGIN\n"), "{out}");
    assert!(out.contains("Xid = 77"), "{out}");
    assert!(out.contains("Rotate to canyon-bin.000002  pos: 4"), "{out}");
    assert!(out.contains("### INSERT INTO `shop`.`every_type`"), "{out}");
    assert!(out.contains("### UPDATE `shop`.`every_type`"), "{out}");
    assert!(out.contains("### DELETE FROM `shop`.`every_type`"), "{out}");
    assert!(
        out.contains("Table_map: `shop`.`every_type` mapped to number 108"),
        "{out}"
    );

    // The INSERT's values, column by column.
    let insert = &out[out.find("### INSERT INTO").expect("insert")..];
    let insert = &insert[..insert.find("# at").expect("next event")];
    for (i, (col, _, shown)) in mariadb_types().iter().enumerate() {
        if !printed(col) {
            continue;
        }
        let prefix = format!("###   @{}=", i + 1);
        let line = insert
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{insert}"));
        let value = line[prefix.len()..]
            .split(" /*")
            .next()
            .expect("value")
            .trim_end();
        // A BLOB's non-UTF-8 tail is compared up to its first invalid byte.
        let ok = if shown.starts_with('\'') && !shown.ends_with('\'') {
            value.starts_with(shown.as_str())
        } else {
            value == shown
        };
        assert!(
            ok,
            "column {} ({}): want {shown}, got {value}",
            i + 1,
            col.name
        );
    }
    // Two rows inserted; the UPDATE's images differ in @2; row 1 deleted.
    assert!(
        insert.contains("###   @1=2 ") && insert.contains("###   @2=127 "),
        "{insert}"
    );
    let update = &out[out.find("### UPDATE").expect("update")..];
    let (wh, set) = update.split_at(update.find("### SET").expect("SET"));
    assert!(
        wh.contains("###   @1=2 ") && wh.contains("###   @2=127 "),
        "{wh}"
    );
    assert!(
        set.contains("###   @1=2 ") && set.contains("###   @2=0 "),
        "{set}"
    );
    let delete = &out[out.find("### DELETE FROM").expect("delete")..];
    assert!(
        delete.contains("###   @1=1 ") && delete.contains("###   @2=-128 "),
        "{delete}"
    );
}

#[test]
fn mariadb_binlog_shows_the_full_table_metadata() {
    let Some(tool) = tool() else { return };
    let f = mysql_flavour_file();
    let out = run(
        tool,
        &["--base64-output=decode-rows", "--print-table-metadata"],
        &f.path(),
    );
    // Names, signedness, nullability, charsets, ENUM / SET members and the
    // primary key all come from TABLE_MAP's optional metadata.
    for want in [
        "# Columns(`id` INT NOT NULL,",
        "`tu` TINYINT UNSIGNED,",
        "`bu` BIGINT UNSIGNED,",
        "`bi` BIGINT,",
        "`dw` DECIMAL(30,10),",
        "`tm` TIME(3),",
        "`dtm` DATETIME(6),",
        "`ts` TIMESTAMP(2),",
        "`vc` VARCHAR(20) CHARSET utf8mb4 COLLATE utf8mb4_general_ci,",
        "`vb` VARBINARY(300),",
        "`ch` CHAR(10) CHARSET latin1 COLLATE latin1_swedish_ci,",
        "`bt` BIT(10),",
        "`e` ENUM('red','green','blue') CHARSET latin1 COLLATE latin1_swedish_ci,",
        "`s` SET('x','y','z') CHARSET latin1 COLLATE latin1_swedish_ci,",
        "`bl` BLOB,",
        "`g` GEOMETRY,",
        "`n` INT)",
        "# Primary Key(id)",
    ] {
        assert!(out.contains(want), "want {want} in\n{out}");
    }
}

/// What MariaDB 10.11's mariadb-binlog cannot show of a MySQL 8 log: the
/// collation utf8mb4_0900_ai_ci (255) in a QUERY event (a warning; the
/// statement is still printed) and rows events with a JSON column (MySQL's
/// binary JSON: printing stops with a failure exit status).
#[test]
fn mariadb_binlog_cannot_show_mysql_8_only_features() {
    let Some(tool) = tool() else { return };
    let mut w = LogWriter::new(true);
    w.push(
        EventType::FORMAT_DESCRIPTION,
        0,
        &format_description("8.0.36-canyon", true),
    );
    let ddl = QueryEvent {
        charset: Some((255, 255, 255)),
        ..ddl("shop", "CREATE TABLE shop.j (id INT PRIMARY KEY, doc JSON)")
    };
    w.push(EventType::QUERY, 0, &query(&ddl).expect("encodes"));
    let cols = vec![
        ColumnMeta::int(false).named("id").primary_key(),
        ColumnMeta::json().named("doc"),
    ];
    w.push(
        EventType::TABLE_MAP,
        0,
        &table_map(5, "shop", "j", &cols).expect("encodes"),
    );
    let mut b = RowsEventBuilder::new(RowsKind::Write, 5, &cols);
    b.push(
        None,
        Some(&[
            BinValue::Int(1),
            BinValue::Json(serde_json::json!({"k": 1})),
        ]),
    )
    .expect("encodes");
    let (rows_at, _) = w.push(EventType::WRITE_ROWS, 0, &b.finish(true));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("canyon-bin.000001");
    std::fs::write(&path, &w.buf).expect("write");
    let out = Command::new(tool)
        .args(["--base64-output=decode-rows", "-vv"])
        .arg(&path)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("# Ignored (Unknown charset) SET @@session.character_set_client=Unknown"),
        "{stdout}"
    );
    assert!(
        stderr.contains("Character set '#255' is not a compiled character set"),
        "{stderr}"
    );
    assert!(
        stdout.contains("CREATE TABLE shop.j (id INT PRIMARY KEY, doc JSON)"),
        "{stdout}"
    );
    assert!(
        !out.status.success(),
        "mariadb-binlog now prints JSON rows: {stdout}"
    );
    assert!(
        stdout.trim_end().ends_with(&format!("# at {rows_at}")),
        "{stdout}"
    );
    assert!(!stdout.contains("### INSERT"), "{stdout}");
    // Without decoding rows, the same file prints as BINLOG statements.
    let plain = Command::new(tool).arg(&path).output().expect("runs");
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
}

#[test]
fn mariadb_binlog_prints_the_mysql_file_as_base64_statements() {
    let Some(tool) = tool() else { return };
    let f = mysql_flavour_file();
    let out = run(tool, &[], &f.path());
    assert_positions(&out, &f.log);
    assert!(out.contains("BINLOG '"), "{out}");
    assert!(out.contains(CREATE_EVERY_TYPE), "{out}");
}

/// The MariaDB-flavour file: MariaDB's FORMAT_DESCRIPTION, GTID_LIST,
/// BINLOG_CHECKPOINT, a DDL group and a row group under MariaDB GTIDs.
fn mariadb_flavour_file() -> Written {
    let mut w = LogWriter::new(true);
    w.push(
        EventType::FORMAT_DESCRIPTION,
        0,
        &format_description_for(Flavor::MariaDb, "10.11.99-MariaDB-canyon", true),
    );
    w.push(
        EventType::GTID_LIST,
        0,
        &canyon_binlog::gtid_list(&[(0, 7, 41)]),
    );
    w.push(
        EventType::BINLOG_CHECKPOINT,
        0,
        &canyon_binlog::binlog_checkpoint("canyon-bin.000001"),
    );
    w.push(
        EventType::MARIADB_GTID,
        0,
        &canyon_binlog::mariadb_gtid(42, 0, MARIADB_FL_STANDALONE | MARIADB_FL_DDL),
    );
    let create = QueryEvent {
        sql: b"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))".to_vec(),
        flags2: Some(flags2::OPTION_AUTO_IS_NULL),
        ..begin("shop")
    };
    w.push(EventType::QUERY, 0, &query(&create).expect("encodes"));
    w.push(
        EventType::MARIADB_GTID,
        0,
        &canyon_binlog::mariadb_gtid(43, 0, MARIADB_FL_TRANSACTIONAL | MARIADB_FL_ALLOW_PARALLEL),
    );
    w.push(
        EventType::ANNOTATE_ROWS,
        0,
        &canyon_binlog::annotate_rows(b"INSERT INTO t VALUES (5, 'five')"),
    );
    let cols = vec![
        ColumnMeta::int(false).named("id").primary_key(),
        ColumnMeta::varchar(40, 45).named("v"),
    ];
    w.push(
        EventType::TABLE_MAP,
        0,
        &table_map(31, "shop", "t", &cols).expect("encodes"),
    );
    let mut b = RowsEventBuilder::new(RowsKind::Write, 31, &cols);
    b.push(
        None,
        Some(&[BinValue::Int(5), BinValue::Bytes(b"five".to_vec())]),
    )
    .expect("row encodes");
    w.push(EventType::WRITE_ROWS, 0, &b.finish(true));
    w.push(EventType::XID, 0, &xid(78));
    w.push(EventType::ROTATE, 0, &rotate(4, "canyon-bin.000002"));
    let dir = tempfile::tempdir().expect("tempdir");
    keep(Written { dir, log: w })
}

#[test]
fn mariadb_binlog_reads_a_mariadb_flavour_file() {
    let Some(tool) = tool() else { return };
    let f = mariadb_flavour_file();
    let out = run(tool, &["--base64-output=decode-rows", "-vv"], &f.path());
    println!("{out}");
    assert_positions(&out, &f.log);
    assert!(out.contains("Gtid list [0-7-41]"), "{out}");
    assert!(out.contains("Binlog checkpoint canyon-bin.000001"), "{out}");
    assert!(out.contains("GTID 0-7-42 ddl"), "{out}");
    assert!(out.contains("SET @@session.gtid_seq_no=42"), "{out}");
    assert!(out.contains("GTID 0-7-43 trans"), "{out}");
    assert!(
        out.contains("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))"),
        "{out}"
    );
    assert!(
        out.contains("#Q> INSERT INTO t VALUES (5, 'five')"),
        "{out}"
    );
    assert!(out.contains("### INSERT INTO `shop`.`t`"), "{out}");
    assert!(out.contains("###   @1=5"), "{out}");
    assert!(out.contains("###   @2='five'"), "{out}");
    assert!(out.contains("Xid = 78"), "{out}");
    // The GTID filter works on our events: starting from the state 0-7-42
    // (its group done), only group 0-7-43 is printed.
    let only = run(
        tool,
        &[
            "--base64-output=decode-rows",
            "-vv",
            "--start-position=0-7-42",
        ],
        &f.path(),
    );
    assert!(only.contains("### INSERT INTO `shop`.`t`"), "{only}");
    assert!(!only.contains("CREATE TABLE t"), "{only}");
    assert!(
        only.contains("GTID 0-7-43 trans") && !only.contains("GTID 0-7-42"),
        "{only}"
    );
}

/// A throwaway MariaDB 10.11 server on a Unix socket in a temporary
/// directory (no TCP port), stopped when dropped.
struct MariaDb {
    child: std::process::Child,
    socket: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl MariaDb {
    /// None (with the reason printed) where the server is not installed.
    fn start() -> Option<MariaDb> {
        for prog in [
            "/usr/sbin/mariadbd",
            "/usr/bin/mariadb-install-db",
            "/usr/bin/mariadb",
        ] {
            if !Path::new(prog).exists() {
                eprintln!("SKIPPED: {prog} is not installed (apt-get install mariadb-server)");
                return None;
            }
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        let out = Command::new("/usr/bin/mariadb-install-db")
            .args(["--no-defaults", "--user=root", "--skip-test-db"])
            .arg(format!("--datadir={}", data.display()))
            .output()
            .expect("mariadb-install-db runs");
        assert!(
            out.status.success(),
            "mariadb-install-db: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let socket = dir.path().join("s");
        let child = Command::new("/usr/sbin/mariadbd")
            .args([
                "--no-defaults",
                "--user=root",
                "--skip-networking",
                "--skip-grant-tables",
            ])
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--log-error={}", dir.path().join("err").display()))
            .env("TZ", "UTC")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("mariadbd starts");
        let server = MariaDb {
            child,
            socket,
            _dir: dir,
        };
        for _ in 0..600 {
            if server.sql_status("SELECT 1").0 {
                return Some(server);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("mariadbd did not come up in 60 s");
    }

    fn client(&self) -> Command {
        let mut c = Command::new("/usr/bin/mariadb");
        c.arg(format!("--socket={}", self.socket.display())).args([
            "--user=root",
            "--batch",
            "--skip-column-names",
        ]);
        c
    }

    fn sql_status(&self, sql: &str) -> (bool, String) {
        let out = self
            .client()
            .args(["-e", sql])
            .output()
            .expect("mariadb runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// `mariadb-binlog FILE | mariadb`: what a point-in-time recovery does.
    fn replay(&self, tool: &str, file: &Path) {
        let printed = Command::new(tool)
            .arg(file)
            .output()
            .expect("mariadb-binlog runs");
        assert!(printed.status.success());
        let mut child = self
            .client()
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("mariadb runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&printed.stdout)
            .expect("feed the client");
        let out = child.wait_with_output().expect("client ends");
        assert!(
            out.status.success(),
            "replay failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A real MariaDB 10.11 server applies both files as piped from
/// mariadb-binlog (the BINLOG statements run the server's row applier,
/// which checks every TABLE_MAP column type against the real table), and
/// the rows it ends with hold exactly the values written.
#[test]
fn mariadb_server_applies_both_flavours() {
    let Some(tool) = tool() else { return };
    let Some(server) = MariaDb::start() else {
        return;
    };
    let f = mysql_flavour_file();
    server.replay(tool, &f.path());
    let (ok, rows) = server.sql_status(
        "SELECT id, ti, tu, si, mi, mu, iu, bi, bu, f, d, dc, dw, y, dt, tm, t0, dtm, dt0, \
         UNIX_TIMESTAMP(ts), vc, LENGTH(vb), ch, cw, BIN(bt), e, s, HEX(bl), tx, ST_AsText(g), n \
         FROM shop.every_type",
    );
    assert!(ok);
    let want = [
        "2",
        "0",
        "255",
        "-32768",
        "-8388608",
        "16777215",
        "4294967295",
        "-9223372036854775808",
        "18446744073709551615",
        "1.5",
        "-2.25",
        "-12345678.90",
        "12345678901234567890.0123456789",
        "2024",
        "2024-02-29",
        "-838:59:58.123",
        "01:02:03",
        "2023-12-31 23:59:59.999999",
        "1000-01-01 00:00:00",
        "1700000000.12",
        "héllo",
        "260",
        "abc",
        "wide char",
        "1000000101",
        "green",
        "x,z",
        "000102FF",
        "long text",
        "POINT(1 2)",
        "NULL",
    ]
    .join("\t");
    assert_eq!(rows.trim_end(), want);

    let f = mariadb_flavour_file();
    server.replay(tool, &f.path());
    let (ok, rows) = server.sql_status("SELECT id, v FROM shop.t");
    assert!(ok);
    assert_eq!(rows, "5\tfive\n");
}

/// MariaDB's own events need the MariaDB flavour's FORMAT_DESCRIPTION (its
/// table of post-header lengths runs to type 171): after MySQL 8's (41
/// types) mariadb-binlog refuses the first of them.
#[test]
fn mariadb_events_need_the_mariadb_format_description() {
    let Some(tool) = tool() else { return };
    for (flavor, readable) in [(Flavor::MySql, false), (Flavor::MariaDb, true)] {
        let mut w = LogWriter::new(true);
        w.push(
            EventType::FORMAT_DESCRIPTION,
            0,
            &format_description_for(flavor, "10.11.99-MariaDB-canyon", true),
        );
        let (list_at, _) = w.push(
            EventType::GTID_LIST,
            0,
            &canyon_binlog::gtid_list(&[(0, 7, 41)]),
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("canyon-bin.000001");
        std::fs::write(&path, &w.buf).expect("write");
        let out = Command::new(tool).arg(&path).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.success(), readable, "{flavor:?}: {stderr}");
        if !readable {
            assert!(
                stderr.contains("Found invalid event in binary log"),
                "{stderr}"
            );
            assert!(
                stderr.contains(&format!("Could not read entry at offset {list_at}")),
                "{stderr}"
            );
        }
    }
}
