//! Every event and every column type, encoded and decoded back.

mod common;

use canyon_binlog::control::{flags2, MARIADB_FL_STANDALONE};
use canyon_binlog::rows::{NO_FOREIGN_KEY_CHECKS_F, STMT_END_F};
use canyon_binlog::{
    format_description, parse_event, rotate, table_map, xid, BinValue, ColumnMeta, Error, Event,
    EventType, Gtid, GtidSet, LogReader, QueryEvent, RowsEventBuilder, RowsKind,
};
use common::{all_types, LogWriter};

fn decode_table_map(body: &[u8]) -> canyon_binlog::TableMap {
    let ev = canyon_binlog::frame(EventType::TABLE_MAP, 0, 1, 0, body, 0, true);
    match parse_event(&ev, true).expect("table map decodes").1 {
        Event::TableMap(tm) => tm,
        other => panic!("not a table map: {other:?}"),
    }
}

#[test]
fn table_map_keeps_types_metadata_and_full_row_metadata() {
    let table = all_types();
    let cols: Vec<ColumnMeta> = table.iter().map(|(c, _, _)| c.clone()).collect();
    let tm = decode_table_map(&table_map(4242, "shop", "every_type", &cols).expect("encodes"));
    assert_eq!(
        (tm.table_id, tm.db.as_str(), tm.table.as_str()),
        (4242, "shop", "every_type")
    );
    assert_eq!(tm.flags, 1);
    // Every field survives: type code, metadata, nullability, signedness,
    // charset, name, ENUM / SET members, primary key.
    assert_eq!(tm.columns, cols);
}

#[test]
fn minimal_row_metadata_keeps_signedness_and_charsets_only() {
    let cols: Vec<ColumnMeta> = all_types().into_iter().map(|(c, _, _)| c).collect();
    let min =
        canyon_binlog::table_map_with(1, "d", "t", &cols, canyon_binlog::RowMetadata::Minimal)
            .expect("encodes");
    let full = table_map(1, "d", "t", &cols).expect("encodes");
    assert!(min.len() < full.len());
    let tm = decode_table_map(&min);
    for (got, want) in tm.columns.iter().zip(&cols) {
        assert_eq!(
            (got.type_code, got.meta, got.nullable),
            (want.type_code, want.meta, want.nullable)
        );
        assert_eq!(
            (got.unsigned, got.charset),
            (want.unsigned, want.charset),
            "{}",
            want.name
        );
        assert!(got.name.is_empty() && got.enum_values.is_empty() && got.set_values.is_empty());
        assert!(!got.in_primary_key);
    }
}

#[test]
fn charset_metadata_uses_the_shorter_form() {
    // Mostly utf8mb4 (255): DEFAULT_CHARSET 255 with one exception.
    let cols = vec![
        ColumnMeta::varchar(40, 255).named("a"),
        ColumnMeta::varchar(40, 255).named("b"),
        ColumnMeta::char(4, 8).named("c"),
        ColumnMeta::blob(2, 63).named("d"),
        ColumnMeta::blob(2, 255).named("e"),
    ];
    let body = table_map(1, "d", "t", &cols).expect("encodes");
    // optional field 2 (DEFAULT_CHARSET): length, 255 packed (0xfc ff 00), (2, 8), (3, 63)
    let needle = [2u8, 7, 0xfc, 0xff, 0x00, 2, 8, 3, 63];
    assert!(body.windows(needle.len()).any(|w| w == needle), "{body:x?}");
    assert_eq!(decode_table_map(&body).columns, cols);
}

fn round_trip_rows(
    kind: RowsKind,
    cols: &[ColumnMeta],
    rows: &[(Option<Vec<BinValue>>, Option<Vec<BinValue>>)],
) {
    let tm = decode_table_map(&table_map(9, "d", "t", cols).expect("encodes"));
    let mut b = RowsEventBuilder::new(kind, 9, cols);
    for (before, after) in rows {
        b.push(before.as_deref(), after.as_deref())
            .expect("row encodes");
    }
    let len = b.body_len();
    let body = b.finish(true);
    assert_eq!(body.len(), len);
    let ev = canyon_binlog::frame(kind.event_type(), 0, 1, 0, &body, 0, false);
    let Event::Rows(re) = parse_event(&ev, false).expect("decodes").1 else {
        panic!("not a rows event");
    };
    assert_eq!(re.kind, kind);
    assert_eq!(re.flags, STMT_END_F);
    let back = re.rows(&tm).expect("rows decode");
    assert_eq!(back.len(), rows.len());
    let full = |img: &Option<Vec<BinValue>>| {
        img.as_ref()
            .map(|v| v.iter().cloned().map(Some).collect::<Vec<_>>())
    };
    for (got, (before, after)) in back.iter().zip(rows) {
        assert_eq!(got.before, full(before));
        assert_eq!(got.after, full(after));
    }
}

#[test]
fn every_column_type_round_trips_in_write_update_and_delete() {
    let table = all_types();
    let cols: Vec<ColumnMeta> = table.iter().map(|(c, _, _)| c.clone()).collect();
    let row: Vec<BinValue> = table.iter().map(|(_, v, _)| v.clone()).collect();
    let mut row2 = row.clone();
    row2[0] = BinValue::Int(2);
    for (i, (c, _, _)) in table.iter().enumerate() {
        if c.nullable {
            row2[i] = BinValue::Null;
        }
    }
    round_trip_rows(
        RowsKind::Write,
        &cols,
        &[(None, Some(row.clone())), (None, Some(row2.clone()))],
    );
    round_trip_rows(
        RowsKind::Update,
        &cols,
        &[(Some(row.clone()), Some(row2.clone()))],
    );
    round_trip_rows(
        RowsKind::Delete,
        &cols,
        &[(Some(row2)), (Some(row))].map(|r| (r, None)),
    );
}

#[test]
fn integer_edges_and_other_values_round_trip() {
    let cols = vec![
        ColumnMeta::tinyint(false),
        ColumnMeta::smallint(true),
        ColumnMeta::mediumint(false),
        ColumnMeta::int(false),
        ColumnMeta::decimal(65, 30),
        ColumnMeta::bit(64),
        ColumnMeta::bit(1),
        ColumnMeta::set((0..64).map(|i| format!("m{i}").into_bytes()).collect(), 8),
        ColumnMeta::enumeration((0..300).map(|i| format!("v{i}").into_bytes()).collect(), 8),
        ColumnMeta::timestamp(6),
        ColumnMeta::time(5),
        ColumnMeta::year(),
    ];
    let rows = [
        vec![
            BinValue::Int(127),
            BinValue::UInt(65535),
            BinValue::Int(8_388_607),
            BinValue::Int(i64::from(i32::MIN)),
            BinValue::Decimal(
                "-99999999999999999999999999999999999.999999999999999999999999999999".into(),
            ),
            BinValue::Bit(u64::MAX),
            BinValue::Bit(1),
            BinValue::Set(u64::MAX),
            BinValue::Enum(300),
            BinValue::Timestamp { secs: 0, micros: 0 },
            BinValue::Time {
                negative: true,
                hours: 0,
                minutes: 0,
                seconds: 0,
                micros: 10,
            },
            BinValue::Year(0),
        ],
        vec![
            BinValue::Int(-1),
            BinValue::UInt(0),
            BinValue::Int(-1),
            BinValue::Int(-1),
            BinValue::Decimal("0.000000000000000000000000000001".into()),
            BinValue::Bit(0),
            BinValue::Bit(0),
            BinValue::Set(0),
            BinValue::Enum(0),
            BinValue::Timestamp {
                secs: i64::from(u32::MAX),
                micros: 999_999,
            },
            BinValue::Time {
                negative: false,
                hours: 838,
                minutes: 59,
                seconds: 59,
                micros: 999_990,
            },
            BinValue::Year(1901),
        ],
    ];
    round_trip_rows(RowsKind::Write, &cols, &rows.map(|r| (None, Some(r))));
}

#[test]
fn values_the_column_cannot_hold_are_refused_and_leave_the_builder_unchanged() {
    let cols = vec![
        ColumnMeta::tinyint(false).named("a").not_null(),
        ColumnMeta::varchar(3, 8).named("b"),
        ColumnMeta::decimal(4, 2).named("c"),
    ];
    let mut b = RowsEventBuilder::new(RowsKind::Write, 1, &cols);
    let ok = [
        BinValue::Int(1),
        BinValue::Bytes(b"abc".to_vec()),
        BinValue::Decimal("10.5".into()),
    ];
    b.push(None, Some(&ok)).expect("fits");
    let len = b.body_len();
    for bad in [
        [BinValue::Int(128), BinValue::Null, BinValue::Null],
        [BinValue::UInt(200), BinValue::Null, BinValue::Null],
        [BinValue::Null, BinValue::Null, BinValue::Null],
        [
            BinValue::Int(1),
            BinValue::Bytes(b"abcd".to_vec()),
            BinValue::Null,
        ],
        [
            BinValue::Int(1),
            BinValue::Null,
            BinValue::Decimal("100.00".into()),
        ],
        [BinValue::Int(1), BinValue::Int(5), BinValue::Null],
    ] {
        assert!(
            matches!(b.push(None, Some(&bad)), Err(Error::Invalid(_))),
            "{bad:?}"
        );
        assert_eq!(b.body_len(), len);
    }
    assert!(
        b.push(Some(&ok), Some(&ok)).is_err(),
        "a write has no before image"
    );
    assert!(b.push(None, Some(&ok[..2])).is_err(), "images are full");
    assert_eq!(b.row_count(), 1);
    let body = b.with_flags(NO_FOREIGN_KEY_CHECKS_F).finish(false);
    assert_eq!(
        u16::from_le_bytes([body[6], body[7]]),
        NO_FOREIGN_KEY_CHECKS_F
    );
}

#[test]
fn a_whole_log_reads_back_event_by_event() {
    let sid =
        canyon_binlog::gtid::parse_uuid("3e11fa47-71ca-11e1-9e33-c80aa9429562").expect("uuid");
    let mut w = LogWriter::new(true);
    w.push(
        EventType::FORMAT_DESCRIPTION,
        0,
        &format_description("8.0.36-canyon", true),
    );
    let mut prev = GtidSet::new();
    prev.add_interval(sid, 1, 10).expect("valid");
    w.push(
        EventType::PREVIOUS_GTIDS,
        0,
        &canyon_binlog::previous_gtids(&prev),
    );
    let g = Gtid {
        sid,
        gno: 11,
        last_committed: 0,
        sequence_number: 1,
        immediate_commit_ts_us: 1_700_000_000_000_000,
        original_commit_ts_us: 1_700_000_000_000_000,
        transaction_length: 123,
        immediate_server_version: 80036,
        original_server_version: 80036,
        may_have_sbr: false,
    };
    w.push(EventType::GTID, 0, &canyon_binlog::gtid(&g));
    let begin = QueryEvent {
        thread_id: 5,
        db: "d".into(),
        sql: b"BEGIN".to_vec(),
        flags2: Some(flags2::OPTION_AUTO_IS_NULL),
        catalog: true,
        ..QueryEvent::default()
    };
    w.push(
        EventType::QUERY,
        0,
        &canyon_binlog::query(&begin).expect("encodes"),
    );
    w.push(EventType::XID, 0, &xid(99));
    w.push(
        EventType::MARIADB_GTID,
        0,
        &canyon_binlog::mariadb_gtid(3, 0, MARIADB_FL_STANDALONE),
    );
    w.push(
        EventType::GTID_LIST,
        0,
        &canyon_binlog::gtid_list(&[(0, 7, 2)]),
    );
    w.push(
        EventType::BINLOG_CHECKPOINT,
        0,
        &canyon_binlog::binlog_checkpoint("c.000001"),
    );
    w.push(
        EventType::ANNOTATE_ROWS,
        0,
        &canyon_binlog::annotate_rows(b"INSERT 1"),
    );
    w.push(
        EventType::HEARTBEAT,
        0,
        &canyon_binlog::heartbeat("c.000001"),
    );
    w.push(EventType(99), 0, b"opaque");
    w.push(EventType::ROTATE, 0, &rotate(4, "c.000002"));

    let events: Vec<_> = LogReader::new(&w.buf)
        .expect("magic")
        .collect::<Result<_, _>>()
        .expect("all decode");
    assert_eq!(events.len(), w.events.len());
    for (e, &(start, end, ty)) in events.iter().zip(&w.events) {
        assert_eq!(
            (e.pos, u64::from(e.header.log_pos), e.header.type_code),
            (start, end, ty)
        );
    }
    assert!(
        matches!(&events[0].event, Event::FormatDescription(fd) if fd.server_version == "8.0.36-canyon" && fd.checksum())
    );
    assert_eq!(events[1].event, Event::PreviousGtids(prev));
    assert_eq!(events[2].event, Event::Gtid(g));
    assert_eq!(events[3].event, Event::Query(begin));
    assert_eq!(events[4].event, Event::Xid(99));
    assert_eq!(
        events[5].event,
        Event::MariadbGtid {
            seq_no: 3,
            domain_id: 0,
            flags: MARIADB_FL_STANDALONE,
            commit_id: None
        }
    );
    assert_eq!(events[6].event, Event::GtidList(vec![(0, 7, 2)]));
    assert_eq!(events[7].event, Event::BinlogCheckpoint("c.000001".into()));
    assert_eq!(events[8].event, Event::AnnotateRows(b"INSERT 1".to_vec()));
    assert_eq!(
        events[9].event,
        Event::Heartbeat {
            log_ident: "c.000001".into()
        }
    );
    assert_eq!(
        events[10].event,
        Event::Unknown {
            type_code: EventType(99),
            body: b"opaque".to_vec()
        }
    );
    assert_eq!(
        events[11].event,
        Event::Rotate {
            next_pos: 4,
            next_file: "c.000002".into()
        }
    );

    // A flipped bit anywhere after the magic is caught by a checksum.
    let mut bad = w.buf.clone();
    let at = w.events[3].0 as usize + 25;
    bad[at] ^= 0x10;
    let res: Result<Vec<_>, _> = LogReader::new(&bad).expect("magic").collect();
    assert!(matches!(res, Err(Error::ChecksumMismatch { .. })));
    assert!(LogReader::new(b"\xfebix").is_err());
}

#[test]
fn a_log_without_checksums_reads_back() {
    let mut w = LogWriter::new(false);
    w.push(
        EventType::FORMAT_DESCRIPTION,
        0,
        &format_description("8.0.36", false),
    );
    w.push(EventType::XID, 0, &xid(1));
    let events: Vec<_> = LogReader::new(&w.buf)
        .expect("magic")
        .collect::<Result<_, _>>()
        .expect("decode");
    assert_eq!(events[1].event, Event::Xid(1));
    assert_eq!(events[1].header.event_size, 27);
}

/// xorshift64*: a deterministic stream of test bytes without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// A replica will decode bytes from the network: corrupt events (cut short,
/// bits flipped, bytes overwritten, in bodies the checksum no longer guards)
/// must give errors, never panics, from the event decoder and from the row
/// decoder run against the (possibly corrupt) table map.
#[test]
fn corrupt_events_are_errors_never_panics() {
    let table = all_types();
    let cols: Vec<ColumnMeta> = table.iter().map(|(c, _, _)| c.clone()).collect();
    let row: Vec<BinValue> = table.iter().map(|(_, v, _)| v.clone()).collect();
    let tm_body = table_map(3, "d", "t", &cols).expect("encodes");
    let tm = decode_table_map(&tm_body);
    let mut b = RowsEventBuilder::new(RowsKind::Update, 3, &cols);
    b.push(Some(&row), Some(&row)).expect("encodes");
    let rows_body = b.finish(true);
    let g = Gtid {
        sid: [9; 16],
        gno: 1,
        transaction_length: 1000,
        ..Gtid::default()
    };
    let bodies: Vec<(EventType, Vec<u8>)> = vec![
        (EventType::TABLE_MAP, tm_body),
        (EventType::UPDATE_ROWS, rows_body),
        (EventType::GTID, canyon_binlog::gtid(&g)),
        (
            EventType::PREVIOUS_GTIDS,
            canyon_binlog::previous_gtids(
                &"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9"
                    .parse::<GtidSet>()
                    .expect("set"),
            ),
        ),
        (
            EventType::QUERY,
            canyon_binlog::query(&QueryEvent {
                db: "d".into(),
                sql: b"BEGIN".to_vec(),
                flags2: Some(0),
                catalog: true,
                charset: Some((1, 2, 3)),
                ..QueryEvent::default()
            })
            .expect("encodes"),
        ),
        (
            EventType::FORMAT_DESCRIPTION,
            format_description("8.0.36", true),
        ),
        (EventType::GTID_LIST, canyon_binlog::gtid_list(&[(1, 2, 3)])),
        (
            EventType::MARIADB_GTID,
            canyon_binlog::mariadb_gtid(1, 2, 0),
        ),
    ];
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut errors = 0;
    for (ty, body) in &bodies {
        for round in 0..400 {
            let mut b = body.clone();
            match round % 4 {
                0 => b.truncate(rng.next() as usize % (b.len() + 1)),
                1 => {
                    let i = rng.next() as usize % b.len();
                    b[i] ^= 1 << (rng.next() % 8);
                }
                2 => {
                    for _ in 0..4 {
                        let i = rng.next() as usize % b.len();
                        b[i] = rng.next() as u8;
                    }
                }
                _ => {
                    let i = rng.next() as usize % b.len();
                    b[i] = [0x00, 0xff, 0xfc, 0xfe, 0x80][rng.next() as usize % 5];
                }
            }
            let ev = canyon_binlog::frame(*ty, 0, 1, 0, &b, 0, false);
            // FORMAT_DESCRIPTION frames with its CRC: a valid event of corrupt content.
            match parse_event(&ev, false) {
                Ok((_, Event::Rows(re))) => {
                    if re.rows(&tm).is_err() {
                        errors += 1;
                    }
                }
                Ok((_, Event::TableMap(bad_tm))) => {
                    // The uncorrupted rows read against a corrupt table map.
                    let ev = canyon_binlog::frame(
                        EventType::UPDATE_ROWS,
                        0,
                        1,
                        0,
                        &bodies[1].1,
                        0,
                        false,
                    );
                    if let Ok((_, Event::Rows(re))) = parse_event(&ev, false) {
                        let _ = re.rows(&bad_tm);
                    }
                }
                Ok(_) => {}
                Err(_) => errors += 1,
            }
        }
    }
    // The corruptions are caught often; some (a flipped value bit) decode.
    assert!(errors > 400, "only {errors} corruptions were errors");
}
