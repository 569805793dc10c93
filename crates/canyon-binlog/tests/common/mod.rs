//! A binary log file assembled in memory, the way a server appends to one:
//! each event framed at the current position with `log_pos` = its end.

#![allow(dead_code)]

use canyon_binlog::event::BINLOG_MAGIC;
use canyon_binlog::rows::field_type;
use canyon_binlog::{frame, framed_len_for, BinValue, ColumnMeta, EventType};

pub const SERVER_ID: u32 = 7;
/// 2023-11-14 22:13:20 UTC.
pub const TS: u32 = 1_700_000_000;

pub struct LogWriter {
    pub buf: Vec<u8>,
    pub checksum: bool,
    /// (start, end, type) of every event written.
    pub events: Vec<(u64, u64, EventType)>,
}

impl LogWriter {
    pub fn new(checksum: bool) -> Self {
        LogWriter {
            buf: BINLOG_MAGIC.to_vec(),
            checksum,
            events: Vec::new(),
        }
    }

    /// Appends one event; returns its (start, end) positions.
    pub fn push(&mut self, ty: EventType, flags: u16, body: &[u8]) -> (u64, u64) {
        self.push_as(ty, SERVER_ID, flags, body)
    }

    pub fn push_as(
        &mut self,
        ty: EventType,
        server_id: u32,
        flags: u16,
        body: &[u8],
    ) -> (u64, u64) {
        let start = self.buf.len() as u64;
        let end = start + framed_len_for(ty, body.len(), self.checksum) as u64;
        let ev = frame(ty, TS, server_id, flags, body, end as u32, self.checksum);
        assert_eq!(ev.len() as u64, end - start);
        self.buf.extend_from_slice(&ev);
        self.events.push((start, end, ty));
        (start, end)
    }
}

/// A table with a column of every type Canyon has, and one row of values
/// for it (plus the text `mariadb-binlog -vv` shows for each value). The
/// character columns use utf8mb4_general_ci (45), latin1 (8) and binary
/// (63): MariaDB has no utf8mb4_0900_ai_ci (255), MySQL 8's default, and
/// `mariadb-binlog -vv` stops at a rows event with such a column (see
/// `mariadb_binlog_stops_at_mysql_8_only_collations`).
pub fn all_types() -> Vec<(ColumnMeta, BinValue, String)> {
    use serde_json::json;
    let rows: Vec<(ColumnMeta, BinValue, &str)> = vec![
        (
            ColumnMeta::int(false).named("id").primary_key(),
            BinValue::Int(1),
            "1",
        ),
        (
            ColumnMeta::tinyint(false).named("ti"),
            BinValue::Int(-128),
            "-128 (128)",
        ),
        (
            ColumnMeta::tinyint(true).named("tu"),
            BinValue::UInt(255),
            "-1 (255)",
        ),
        (
            ColumnMeta::smallint(false).named("si"),
            BinValue::Int(-32768),
            "-32768 (32768)",
        ),
        (
            ColumnMeta::mediumint(false).named("mi"),
            BinValue::Int(-8_388_608),
            "-8388608 (8388608)",
        ),
        (
            ColumnMeta::mediumint(true).named("mu"),
            BinValue::UInt(16_777_215),
            "-1 (16777215)",
        ),
        (
            ColumnMeta::int(true).named("iu"),
            BinValue::UInt(4_294_967_295),
            "-1 (4294967295)",
        ),
        (
            ColumnMeta::bigint(false).named("bi"),
            BinValue::Int(i64::MIN),
            "-9223372036854775808 (9223372036854775808)",
        ),
        (
            ColumnMeta::bigint(true).named("bu"),
            BinValue::UInt(u64::MAX),
            "-1 (18446744073709551615)",
        ),
        (ColumnMeta::float().named("f"), BinValue::Float(1.5), "1.5"),
        (
            ColumnMeta::double().named("d"),
            BinValue::Double(-2.25),
            "-2.25",
        ),
        (
            ColumnMeta::decimal(10, 2).named("dc"),
            BinValue::Decimal("-12345678.90".into()),
            "-12345678.90",
        ),
        (
            ColumnMeta::decimal(30, 10).named("dw"),
            BinValue::Decimal("12345678901234567890.0123456789".into()),
            "12345678901234567890.0123456789",
        ),
        (ColumnMeta::year().named("y"), BinValue::Year(2024), "2024"),
        (
            ColumnMeta::date().named("dt"),
            BinValue::Date {
                year: 2024,
                month: 2,
                day: 29,
            },
            "'2024:02:29'",
        ),
        (
            ColumnMeta::time(3).named("tm"),
            BinValue::Time {
                negative: true,
                hours: 838,
                minutes: 59,
                seconds: 58,
                micros: 123_000,
            },
            "'-838:59:58.123'",
        ),
        (
            ColumnMeta::time(0).named("t0"),
            BinValue::Time {
                negative: false,
                hours: 1,
                minutes: 2,
                seconds: 3,
                micros: 0,
            },
            "'01:02:03'",
        ),
        (
            ColumnMeta::datetime(6).named("dtm"),
            BinValue::DateTime {
                year: 2023,
                month: 12,
                day: 31,
                hour: 23,
                minute: 59,
                second: 59,
                micros: 999_999,
            },
            "'2023-12-31 23:59:59.999999'",
        ),
        (
            ColumnMeta::datetime(0).named("dt0"),
            BinValue::DateTime {
                year: 1000,
                month: 1,
                day: 1,
                hour: 0,
                minute: 0,
                second: 0,
                micros: 0,
            },
            "'1000-01-01 00:00:00'",
        ),
        (
            ColumnMeta::timestamp(2).named("ts"),
            BinValue::Timestamp {
                secs: 1_700_000_000,
                micros: 120_000,
            },
            "1700000000.12",
        ),
        (
            ColumnMeta::varchar(80, 45).named("vc"),
            BinValue::Bytes("héllo".as_bytes().to_vec()),
            "'héllo'",
        ),
        (
            ColumnMeta::varchar(300, 63).named("vb"),
            BinValue::Bytes(vec![b'x'; 260]),
            "'xxxx",
        ),
        (
            ColumnMeta::char(10, 8).named("ch"),
            BinValue::Bytes(b"abc".to_vec()),
            "'abc'",
        ),
        (
            ColumnMeta::char(1020, 45).named("cw"),
            BinValue::Bytes(b"wide char".to_vec()),
            "'wide char'",
        ),
        (
            ColumnMeta::bit(10).named("bt"),
            BinValue::Bit(0b10_0000_0101),
            "b'1000000101'",
        ),
        (
            ColumnMeta::enumeration(
                vec![b"red".to_vec(), b"green".to_vec(), b"blue".to_vec()],
                8,
            )
            .named("e"),
            BinValue::Enum(2),
            "2",
        ),
        (
            ColumnMeta::set(vec![b"x".to_vec(), b"y".to_vec(), b"z".to_vec()], 8).named("s"),
            BinValue::Set(0b101),
            "b'00000101'",
        ),
        (
            ColumnMeta::blob(2, 63).named("bl"),
            BinValue::Bytes(vec![0, 1, 2, 0xff]),
            "'\\x00\\x01\\x02",
        ),
        (
            ColumnMeta::blob(4, 45).named("tx"),
            BinValue::Bytes(b"long text".to_vec()),
            "'long text'",
        ),
        (
            ColumnMeta::json().named("j"),
            BinValue::Json(json!({"a": [1, 2.5, "x", null, true]})),
            "",
        ),
        (
            ColumnMeta::geometry().named("g"),
            BinValue::Bytes(point_wkb()),
            "",
        ),
        (ColumnMeta::int(false).named("n"), BinValue::Null, "NULL"),
    ];
    rows.into_iter()
        .map(|(c, v, s)| {
            // VARBINARY(300) is shown whole.
            let shown = if c.name == "vb" {
                format!("'{}'", "x".repeat(260))
            } else {
                s.to_string()
            };
            (c, v, shown)
        })
        .collect()
}

/// POINT(1 2) with SRID 0, as MySQL stores it.
pub fn point_wkb() -> Vec<u8> {
    let mut v = vec![0, 0, 0, 0, 1, 1, 0, 0, 0];
    v.extend_from_slice(&1f64.to_le_bytes());
    v.extend_from_slice(&2f64.to_le_bytes());
    v
}

/// True for column types whose value text `mariadb-binlog -vv` prints is
/// checked: it prints a GEOMETRY as raw bytes, which are not compared, and a
/// BLOB's non-UTF-8 tail is compared only up to it.
pub fn printed(col: &ColumnMeta) -> bool {
    !matches!(col.type_code, field_type::JSON | field_type::GEOMETRY)
}

/// [`all_types`] without JSON: MariaDB has no binary JSON type, and
/// `mariadb-binlog -vv` cannot print a rows event with a JSON column (see
/// `mariadb_binlog_cannot_show_mysql_8_only_features`).
pub fn mariadb_types() -> Vec<(ColumnMeta, BinValue, String)> {
    all_types()
        .into_iter()
        .filter(|(c, _, _)| c.type_code != field_type::JSON)
        .collect()
}
