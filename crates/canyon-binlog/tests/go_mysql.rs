//! A MySQL-flavour file read by go-mysql (github.com/go-mysql-org/go-mysql
//! v1.13.0, the replication library behind canal, gh-ost and many CDC
//! tools): an independent reader of exactly what MariaDB's tools skip or
//! cannot show, MySQL 8's GTID events (logical clock, commit timestamps,
//! transaction length, server versions), PREVIOUS_GTIDS and binary JSON.
//!
//! tests/go-mysql/main.go prints each event one fact per line; it is built
//! with the Go toolchain from the pinned go.mod / go.sum (modules from the Go
//! module proxy). Skipped, with a printed reason, only where `go` is missing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use canyon_binlog::gtid::{gtid_transaction_length, parse_uuid};
use canyon_binlog::{
    format_description, gtid, previous_gtids, query, rotate, table_map, xid, BinValue, ColumnMeta,
    EventType, Gtid, GtidSet, QueryEvent, RowsEventBuilder, RowsKind,
};
use common::{all_types, LogWriter};
use serde_json::json;

const UUID: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

/// Builds the dumper; None (with the reason printed) when there is no Go.
fn dumper() -> Option<PathBuf> {
    let go = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("go"))
            .find(|p| p.is_file())
    });
    let Some(go) =
        go.or_else(|| Some(PathBuf::from("/usr/local/go/bin/go")).filter(|p| p.is_file()))
    else {
        eprintln!("SKIPPED: no Go toolchain to build the go-mysql reader");
        return None;
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/go-mysql");
    let bin = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go-mysql-dump");
    let out = Command::new(go)
        .args(["build", "-mod=readonly", "-buildvcs=false", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        // The pinned modules (scripts/install-deps.sh downloads them); never
        // a toolchain download.
        .env("GOTOOLCHAIN", "local")
        .output()
        .expect("go runs");
    assert!(
        out.status.success(),
        "go build of tests/go-mysql failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(bin)
}

fn dump(bin: &Path, file: &Path) -> String {
    let out = Command::new(bin)
        .arg(file)
        .output()
        .expect("the dumper runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "go-mysql could not read the file: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// What go-mysql shows for each value of [`all_types`]. It returns integers
/// as stored (signed: the UNSIGNED flag is in the table map, for the
/// consumer to apply), DECIMAL without trailing zeros, temporal values as
/// text (TIMESTAMP in the zone it is told, UTC here), JSON as JSON text.
fn go_values() -> Vec<&'static str> {
    vec![
        "1",
        "-128",
        "-1",
        "-32768",
        "-8388608",
        "-1",
        "-1",
        "-9223372036854775808",
        "-1",
        "1.5",
        "-2.25",
        "-12345678.9",
        "12345678901234567890.0123456789",
        "2024",
        "\"2024-02-29\"",
        "\"-838:59:58.123\"",
        "\"01:02:03\"",
        "\"2023-12-31 23:59:59.999999\"",
        "\"1000-01-01 00:00:00\"",
        "\"2023-11-14 22:13:20.12\"",
        "\"héllo\"",
        "", // 260 x's, checked apart
        "\"abc\"",
        "\"wide char\"",
        "517",
        "2",
        "5",
        "\"\\x00\\x01\\x02\\xff\"",
        "\"long text\"",
        "", // JSON, compared as a parsed value
        "\"\\x00\\x00\\x00\\x00\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\xf0?\\x00\\x00\\x00\\x00\\x00\\x00\\x00@\"",
        "NULL",
    ]
}

#[test]
fn go_mysql_reads_gtids_row_images_and_binary_json() {
    let Some(bin) = dumper() else { return };
    let sid = parse_uuid(UUID).expect("uuid");
    let mut w = LogWriter::new(true);
    w.push(
        EventType::FORMAT_DESCRIPTION,
        0,
        &format_description("8.0.36-canyon", true),
    );
    let mut prev = GtidSet::new();
    prev.add_interval(sid, 1, 2).expect("valid");
    prev.add_interval(sid, 5, 9).expect("valid");
    prev.add(
        parse_uuid("00000000-0000-0000-0000-000000000001").expect("uuid"),
        7,
    )
    .expect("valid");
    w.push(EventType::PREVIOUS_GTIDS, 0, &previous_gtids(&prev));

    let table = all_types();
    let cols: Vec<ColumnMeta> = table.iter().map(|(c, _, _)| c.clone()).collect();
    let mut row: Vec<BinValue> = table.iter().map(|(_, v, _)| v.clone()).collect();
    // A JSON document of every JSON type, with a large (over 64 KiB) array.
    let doc = json!({
        "int16": -5, "int32": 100_000, "int64": -5_000_000_000i64, "uint64": u64::MAX,
        "double": 0.125, "string": "ünïcødé ✓", "null": null, "t": true, "f": false,
        "empty_o": {}, "empty_a": [], "nested": {"b": {"c": [1, [2, [3]]]}},
        "big": (0..3000).map(|i| format!("item {i:05}")).collect::<Vec<_>>(),
    });
    let j = cols
        .iter()
        .position(|c| c.name == "j")
        .expect("json column");
    row[j] = BinValue::Json(doc.clone());

    // The transaction's events, framed after its GTID event; the GTID event
    // carries the length of the whole.
    let begin = QueryEvent {
        thread_id: 3,
        db: "shop".into(),
        sql: b"BEGIN".to_vec(),
        flags2: Some(0),
        sql_mode: Some(0),
        catalog: true,
        charset: Some((255, 255, 255)),
        ..QueryEvent::default()
    };
    let begin = query(&begin).expect("encodes");
    let tm = table_map(108, "shop", "every_type", &cols).expect("encodes");
    let mut b = RowsEventBuilder::new(RowsKind::Write, 108, &cols);
    b.push(None, Some(&row)).expect("row encodes");
    let rows = b.finish(true);
    let rest: u64 = [begin.len(), tm.len(), rows.len(), 8]
        .iter()
        .map(|&n| canyon_binlog::framed_len(n, true) as u64)
        .sum();
    let mut g = Gtid {
        sid,
        gno: 10,
        last_committed: 4,
        sequence_number: 5,
        immediate_commit_ts_us: 1_700_000_000_654_321,
        // Replicated from an older source: both timestamps and versions.
        original_commit_ts_us: 1_699_999_999_000_001,
        transaction_length: 0,
        immediate_server_version: 80036,
        original_server_version: 80027,
        may_have_sbr: false,
    };
    g.transaction_length = gtid_transaction_length(&g, rest, true);
    let (gtid_start, _) = w.push(EventType::GTID, 0, &gtid(&g));
    w.push(EventType::QUERY, 0, &begin);
    w.push(EventType::TABLE_MAP, 0, &tm);
    w.push(EventType::WRITE_ROWS, 0, &rows);
    let (_, xid_end) = w.push(EventType::XID, 0, &xid(9));
    assert_eq!(xid_end - gtid_start, g.transaction_length);
    w.push(EventType::ROTATE, 0, &rotate(4, "canyon-bin.000002"));

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("canyon-bin.000001");
    std::fs::write(&path, &w.buf).expect("write");
    let out = dump(&bin, &path);

    // Every event, its end position and size.
    let names = [
        "FormatDescriptionEvent",
        "PreviousGTIDsEvent",
        "GTIDEvent",
        "QueryEvent",
        "TableMapEvent",
        "WriteRowsEventV2",
        "XIDEvent",
        "RotateEvent",
    ];
    let events: Vec<&str> = out.lines().filter(|l| l.starts_with("event ")).collect();
    assert_eq!(events.len(), w.events.len(), "{out}");
    for ((line, &(start, end, _)), name) in events.iter().zip(&w.events).zip(names) {
        assert_eq!(
            *line,
            format!("event {name} end={end} size={}", end - start)
        );
    }
    let has = |want: &str| {
        assert!(
            out.lines().any(|l| l == want),
            "want line {want:?} in\n{out}"
        )
    };
    has("format version=4 server=8.0.36-canyon checksum=1");
    has(&format!(
        "previous 00000000-0000-0000-0000-000000000001:7,{UUID}:1-2:5-9"
    ));
    has(&format!(
        "gtid {UUID}:10 flag=0 last_committed=4 sequence_number=5 commit_ts=1700000000654321 \
         original_ts=1699999999000001 length={} version=80036 original_version=80027",
        g.transaction_length
    ));
    has("query schema=shop sql=BEGIN");
    has("table shop.every_type id=108");
    has("xid 9");
    has("rotate canyon-bin.000002 4");
    has("primary key [0]");
    for (i, c) in cols.iter().enumerate() {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("column {i} ")))
            .unwrap_or_else(|| panic!("column {i} missing"));
        let want_start = format!(
            "column {i} {} type={} meta={} nullable={} unsigned={}",
            c.name, c.type_code, c.meta, c.nullable, c.unsigned
        );
        assert!(line.starts_with(&want_start), "{line}\nwant {want_start}");
        if c.type_code == canyon_binlog::rows::field_type::STRING && c.real_type() != c.type_code {
            assert!(
                line.contains(&format!("enum_set_collation={}", c.charset)),
                "{line}"
            );
        } else {
            assert!(line.contains(&format!("collation={}", c.charset)), "{line}");
        }
        let members = |v: &[Vec<u8>]| {
            v.iter()
                .map(|m| String::from_utf8_lossy(m).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert!(
            line.contains(&format!("enum=[{}]", members(&c.enum_values))),
            "{line}"
        );
        assert!(
            line.contains(&format!("set=[{}]", members(&c.set_values))),
            "{line}"
        );
    }
    for (i, want) in go_values().iter().enumerate() {
        let prefix = format!("row 0 col {i} = ");
        let got = out
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no value for column {i}"));
        match cols[i].name.as_str() {
            "vb" => assert_eq!(got, format!("\"{}\"", "x".repeat(260))),
            "j" => {
                let text: String = serde_json::from_str(got).expect("a quoted string");
                let back: serde_json::Value = serde_json::from_str(&text).expect("JSON text");
                assert_eq!(back, doc);
            }
            _ => assert_eq!(got, *want, "column {i} ({})", cols[i].name),
        }
    }
}
