//! Row events applied to tables: the other direction of `events.rs`.
//!
//! Two callers feed this module binary-log events and want the rows they
//! describe stored, as a MySQL replica's applier stores them:
//!
//! - the `BINLOG '<base64>'` statement, which `mysqlbinlog` /
//!   `mariadb-binlog` print for every row event, so that their output piped
//!   into a client replays a log (point-in-time recovery);
//! - Canyon as a replica (`crate::session::replica`), for each transaction
//!   read from its source.
//!
//! # What an applier keeps between events
//!
//! [`Applier`] holds what MySQL keeps in a replica's relay-log info (and in
//! the session's "fake" one for BINLOG statements): whether events end in a
//! CRC32 (from the last FORMAT_DESCRIPTION; a rows event before any is
//! refused, 1609, as MySQL refuses it), and the TABLE_MAPs by table id until
//! a statement ends (`STMT_END_F`), after which MySQL's writer may reuse ids.
//!
//! # How a row is applied
//!
//! Row images name columns by position. A row image's value becomes the
//! value Canyon stores for that column type (`stored_value`) without
//! `sql_mode`, time zone or character-set conversions of a client's value:
//! the image already is a stored value, and the replica must store the
//! same one (TIMESTAMP images are UTC instants, text is in the column's
//! character set). A table with more columns than the image gets each extra
//! column's default, as MySQL does for a replica table with extra trailing
//! columns; a column whose type differs from the map's stops the applier
//! with 1677, and a map with more columns than the table with 1532.
//!
//! Updates and deletes find their row by the primary key of the before image
//! (a table without one: by a scan for a row equal to the whole before
//! image, as MySQL does without an index); a missing row is 1032 and a
//! duplicate on insert 1062, MySQL's `slave_exec_mode = STRICT`. Rows are
//! written through the executor's own paths (`crate::exec`), so indexes,
//! row locks, and the journal of this server's own binary log (a replica
//! with `log_bin` logs what it applies) all see an ordinary write. Triggers
//! do not fire and foreign keys are not checked: under row-based replication
//! the source already ran them, and their effects are rows in the log.

use crate::binlog::columns::column_meta;
use crate::catalog::schema::ColumnDef;
use crate::catalog::Table;
use crate::expr::eval::{coerce_column, EvalContext};
use crate::types::datetime::{format_time_fsp, ZERO_DATE, ZERO_DATETIME};
use crate::types::sqltype::SqlType;
use crate::types::value::Value;
use canyon_binlog::decode::{parse_event, Event};
use canyon_binlog::event::{parse_header, EventType, Header};
use canyon_binlog::rows::{RowsEvent, TableMap};
use canyon_binlog::BinValue;
use canyon_common::{Error, Result};
use chrono::{DateTime, NaiveDate, NaiveTime};
use std::collections::HashMap;

/// `STMT_END_F`: the last rows event of a statement.
const STMT_END_F: u16 = 1;

fn sql(code: u16, message: String) -> Error {
    Error::Sql {
        code,
        sqlstate: *b"HY000",
        message,
    }
}

/// An event that cannot be read: MySQL's ER_SLAVE_FATAL_ERROR-style 1594
/// for a replica, and what a BINLOG statement with bad bytes gets.
fn unreadable(what: impl std::fmt::Display) -> Error {
    sql(
        1594,
        format!("Relay log read failure: could not parse event: {what}"),
    )
}

/// The applier's state between events (see the module doc).
#[derive(Debug, Default)]
pub struct Applier {
    /// `Some(crc)` once a FORMAT_DESCRIPTION was seen.
    checksum: Option<bool>,
    /// The TABLE_MAPs of the statement being applied, by table id.
    maps: HashMap<u64, TableMap>,
}

/// One event as the caller must act on it.
#[derive(Debug)]
pub enum Step {
    /// Nothing for the caller (FORMAT_DESCRIPTION, TABLE_MAP, ...).
    None,
    /// Rows to apply, with the map of their table.
    Rows(TableMap, RowsEvent),
    /// Any other event, decoded, for the caller to act on (GTID, QUERY,
    /// XID, ROTATE ...).
    Other(Header, Event),
}

impl Applier {
    /// A fresh applier: no FORMAT_DESCRIPTION seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a FORMAT_DESCRIPTION was seen.
    pub fn has_format(&self) -> bool {
        self.checksum.is_some()
    }

    /// Reads the framed event `raw` (exactly one event, with its checksum
    /// when the log has them) and says what to do with it.
    pub fn step(&mut self, raw: &[u8]) -> Result<Step> {
        let header = parse_header(raw).map_err(unreadable)?;
        let is_fd = header.type_code == EventType::FORMAT_DESCRIPTION;
        let artificial = matches!(header.type_code, EventType::ROTATE | EventType::HEARTBEAT);
        if artificial && self.checksum.is_none() {
            // A dump starts with a ROTATE made up before the file's
            // FORMAT_DESCRIPTION; whether it has a CRC depends on what the
            // replica asked for, which the CRC itself tells.
            let (header, event) = parse_event(raw, true)
                .or_else(|_| parse_event(raw, false))
                .map_err(unreadable)?;
            return Ok(Step::Other(header, event));
        }
        if !is_fd && self.checksum.is_none() {
            return Err(sql(
                1609,
                format!(
                    "The BINLOG statement of type `{}` was not preceded by a format \
                     description BINLOG statement.",
                    type_name(header.type_code)
                ),
            ));
        }
        let (header, event) =
            parse_event(raw, self.checksum.unwrap_or(false)).map_err(unreadable)?;
        match event {
            Event::FormatDescription(fd) => {
                self.checksum = Some(fd.checksum());
                self.maps.clear();
                Ok(Step::None)
            }
            Event::TableMap(m) => {
                self.maps.insert(m.table_id, m);
                Ok(Step::None)
            }
            Event::Rows(r) => {
                let map = self.maps.get(&r.table_id).cloned().ok_or_else(|| {
                    sql(
                        1594,
                        format!(
                            "rows event for table id {} without its TABLE_MAP",
                            r.table_id
                        ),
                    )
                })?;
                if r.flags & STMT_END_F != 0 {
                    self.maps.clear();
                }
                Ok(Step::Rows(map, r))
            }
            other => Ok(Step::Other(header, other)),
        }
    }

    /// Splits the concatenated events of a BINLOG statement's bytes.
    pub fn split(bytes: &[u8]) -> Result<Vec<&[u8]>> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let h = parse_header(&bytes[at..]).map_err(unreadable)?;
            let size = h.event_size as usize;
            if size < canyon_binlog::event::HEADER_LEN || at + size > bytes.len() {
                return Err(unreadable(format!(
                    "event of {size} bytes at offset {at} of {}",
                    bytes.len()
                )));
            }
            out.push(&bytes[at..at + size]);
            at += size;
        }
        Ok(out)
    }

    /// Forgets the table maps (a transaction ended or was given up).
    pub fn clear_maps(&mut self) {
        self.maps.clear();
    }
}

fn type_name(t: EventType) -> &'static str {
    match t {
        EventType::TABLE_MAP => "Table_map",
        EventType::WRITE_ROWS => "Write_rows",
        EventType::UPDATE_ROWS => "Update_rows",
        EventType::DELETE_ROWS => "Delete_rows",
        EventType::QUERY => "Query",
        EventType::XID => "Xid",
        _ => "event",
    }
}

/// Checks that `map` describes `table`: no more columns than it has, each
/// of the same binary-log type.
pub(crate) fn check_map(table: &Table, map: &TableMap) -> Result<()> {
    let def = &table.def;
    if map.columns.len() > def.columns.len() {
        return Err(sql(
            1532,
            format!(
                "Table definition on master and slave does not match: Table '{}.{}' has {} \
                 columns on the master and {} on the slave",
                def.db,
                def.name,
                map.columns.len(),
                def.columns.len()
            ),
        ));
    }
    for (i, (m, c)) in map.columns.iter().zip(&def.columns).enumerate() {
        let mine = column_meta(c, false);
        if (m.type_code, m.real_type()) != (mine.type_code, mine.real_type()) {
            use canyon_binlog::rows::field_type::name;
            return Err(sql(
                1677,
                format!(
                    "Column {i} of table '{}.{}' cannot be converted from type '{}' to type '{}'",
                    def.db,
                    def.name,
                    name(m.type_code, m.real_type()),
                    name(mine.type_code, mine.real_type())
                ),
            ));
        }
    }
    Ok(())
}

/// The full row an image gives for `table`: the image's columns, and each
/// column it lacks from `base` (an update's stored row) or else its default.
pub(crate) fn image_row(
    table: &Table,
    image: &[Option<BinValue>],
    base: Option<&[Value]>,
    ctx: &dyn EvalContext,
) -> Result<Vec<Value>> {
    let def = &table.def;
    let mut row = Vec::with_capacity(def.columns.len());
    for (i, c) in def.columns.iter().enumerate() {
        let v = match (image.get(i), base) {
            (Some(Some(b)), _) => stored_value(c, b)?,
            (_, Some(b)) => b[i].clone(),
            (_, None) => default_value(c, ctx)?,
        };
        row.push(v);
    }
    Ok(row)
}

/// A column's value when a row image lacks it (a replica table with extra
/// trailing columns): its default, else NULL or the type's implicit
/// default, as MySQL's replica fills them. A generated column there would
/// need its expression evaluated over the row: refused.
fn default_value(c: &ColumnDef, ctx: &dyn EvalContext) -> Result<Value> {
    if c.attrs.generated.is_some() {
        return Err(sql(
            1532,
            format!(
                "Table definition on master and slave does not match: the row image has no \
                 value for the generated column '{}'",
                c.name
            ),
        ));
    }
    let v = match &c.default {
        Some(d) => crate::catalog::default_value(d, || ctx.now()),
        None if c.nullable => return Ok(Value::Null),
        None => return Ok(crate::exec::load::implicit_default(c.ty)),
    };
    coerce_column(v, c, 0, ctx)
}

fn mismatch(c: &ColumnDef, b: &BinValue) -> Error {
    sql(
        1677,
        format!(
            "Column '{}' of type {:?} cannot be converted from the row image value {b:?}",
            c.name, c.ty
        ),
    )
}

/// The value Canyon stores for `c` that the row image value `b` stands
/// for (the inverse of `columns::bin_value`).
pub(crate) fn stored_value(c: &ColumnDef, b: &BinValue) -> Result<Value> {
    let ty = c.ty;
    Ok(match (ty, b) {
        (_, BinValue::Null) => Value::Null,
        (ty, BinValue::Int(i)) if ty.is_integer() => {
            if ty.is_unsigned() {
                Value::UInt(*i as u64)
            } else {
                Value::Int(*i)
            }
        }
        (ty, BinValue::UInt(u)) if ty.is_integer() => {
            if ty.is_unsigned() {
                Value::UInt(*u)
            } else {
                Value::Int(*u as i64)
            }
        }
        (SqlType::Float { .. }, BinValue::Float(f)) => Value::Double(f64::from(*f)),
        (SqlType::Double { .. }, BinValue::Double(d)) => Value::Double(*d),
        (SqlType::Decimal { .. }, BinValue::Decimal(s)) => {
            Value::Decimal(s.parse().map_err(|_| mismatch(c, b))?)
        }
        (SqlType::Char(_) | SqlType::VarChar(_) | SqlType::Text(_), BinValue::Bytes(bytes)) => {
            let cs = c.collation.character_set();
            if cs.is_passthrough() {
                Value::Bytes(bytes.clone())
            } else {
                Value::Bytes(cs.decode(bytes).into_owned().into_bytes())
            }
        }
        (SqlType::Binary(_) | SqlType::VarBinary(_) | SqlType::Blob(_), BinValue::Bytes(bytes)) => {
            Value::Bytes(bytes.clone())
        }
        (SqlType::Date, BinValue::Date { year, month, day }) => {
            Value::Date(date(*year, *month, *day).ok_or_else(|| mismatch(c, b))?)
        }
        (
            SqlType::DateTime(_),
            &BinValue::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            },
        ) => Value::DateTime(match date(year, month, day) {
            Some(d) if d == ZERO_DATE => ZERO_DATETIME,
            Some(d) => d.and_time(
                NaiveTime::from_hms_micro_opt(
                    u32::from(hour),
                    u32::from(minute),
                    u32::from(second),
                    micros,
                )
                .ok_or_else(|| mismatch(c, b))?,
            ),
            None => return Err(mismatch(c, b)),
        }),
        // The stored form of a TIMESTAMP is its UTC instant (the zero
        // TIMESTAMP is the zero date-time in every zone).
        (SqlType::Timestamp(_), &BinValue::Timestamp { secs, micros }) => {
            Value::DateTime(if secs == 0 && micros == 0 {
                ZERO_DATETIME
            } else {
                DateTime::from_timestamp(secs, micros * 1000)
                    .ok_or_else(|| mismatch(c, b))?
                    .naive_utc()
            })
        }
        (SqlType::Bit(_), BinValue::Bit(u)) => Value::UInt(*u),
        (SqlType::Year, BinValue::Year(y)) => Value::UInt(u64::from(*y)),
        (
            SqlType::Time(fsp),
            &BinValue::Time {
                negative,
                hours,
                minutes,
                seconds,
                micros,
            },
        ) => {
            let m = ((i64::from(hours) * 60 + i64::from(minutes)) * 60 + i64::from(seconds))
                * 1_000_000
                + i64::from(micros);
            Value::Bytes(format_time_fsp(if negative { -m } else { m }, fsp).into_bytes())
        }
        (SqlType::Enum(m), BinValue::Enum(i)) => match usize::from(*i) {
            0 => Value::Bytes(Vec::new()),
            i => Value::str(m.values.get(i - 1).ok_or_else(|| mismatch(c, b))?),
        },
        (SqlType::Set(m), BinValue::Set(mask)) => {
            if m.values.len() < 64 && mask >> m.values.len() != 0 {
                return Err(mismatch(c, b));
            }
            let members: Vec<&str> = m
                .values
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, v)| v.as_str())
                .collect();
            Value::str(&members.join(","))
        }
        (SqlType::Json, BinValue::Json(doc)) => {
            let text = doc.to_string();
            let node = crate::types::json::parse(text.as_bytes()).map_err(|_| mismatch(c, b))?;
            Value::Json(node.encode())
        }
        _ => return Err(mismatch(c, b)),
    })
}

/// A DATE's fields as Canyon holds them: month 0 or day 0 only in the zero
/// date (Canyon keeps no other zero-in-date value).
fn date(year: u16, month: u8, day: u8) -> Option<NaiveDate> {
    if year == 0 && month == 0 && day == 0 {
        return Some(ZERO_DATE);
    }
    NaiveDate::from_ymd_opt(i32::from(year), u32::from(month), u32::from(day))
}

/// Whether a stored row equals a before image's row (a table without a
/// primary key finds its row this way). NULLs are equal here.
pub(crate) fn same_row(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}
