//! Prepared statements: the COM_STMT_PREPARE response, COM_STMT_EXECUTE parameter
//! decoding, COM_STMT_SEND_LONG_DATA, and binary result rows.
//!
//! COM_STMT_EXECUTE (MySQL manual, "COM_STMT_EXECUTE"):
//!
//! ```text
//!  0x17 | stmt_id int<4> | flags int<1> | iteration_count int<4> (always 1)
//!  if params > 0:
//!     NULL bitmap  (params + 7) / 8 bytes, bit i = parameter i is NULL
//!     new_params_bound_flag int<1>
//!     if 1: params x (type int<1>, flags int<1>: 0x80 = unsigned)
//!     values of the non-NULL parameters, in the binary form of their type
//! ```
//!
//! Clients send the types only when they change: sysbench and libmysql re-execute
//! with `new_params_bound_flag = 0`, so the types of the last execute are kept per
//! statement in [`PreparedParams`]. A parameter whose data came through
//! COM_STMT_SEND_LONG_DATA has no bytes in the execute packet; the accumulated
//! data is used and then forgotten.
//!
//! Binary result rows: `0x00`, a NULL bitmap with an offset of 2 bits, then each
//! non-NULL value in the binary form of its column's type.
//!
//! Not implemented: cursors (CURSOR_TYPE_READ_ONLY is ignored, the whole result
//! is sent), COM_STMT_FETCH, query attributes in COM_STMT_EXECUTE.

use super::codec::{put_u16, put_u32, Cursor, Truncated};
use super::text::write_text_value;
use canyon_common::Error;
use canyon_sql::decimal::Decimal;
use canyon_sql::{charset, column_flags, Column, ColumnType, Value};
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

/// The command name MySQL uses in COM_STMT_EXECUTE error messages.
pub const EXECUTE_COMMAND: &str = "mysqld_stmt_execute";

/// The type a client announced for one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamType {
    /// The `MYSQL_TYPE_*` byte.
    pub code: u8,
    /// The 0x80 flag of the type's second byte.
    pub unsigned: bool,
}

/// What the server remembers about one prepared statement's parameters between
/// executes.
#[derive(Debug, Clone, Default)]
pub struct PreparedParams {
    count: u16,
    types: Option<Vec<ParamType>>,
    long_data: Vec<Option<Vec<u8>>>,
    long_data_bytes: usize,
    long_data_error: Option<Error>,
}

impl PreparedParams {
    /// A statement with `count` parameters and no types bound yet.
    pub fn new(count: u16) -> Self {
        PreparedParams {
            count,
            types: None,
            long_data: vec![None; usize::from(count)],
            long_data_bytes: 0,
            long_data_error: None,
        }
    }

    /// The number of parameters.
    pub fn count(&self) -> u16 {
        self.count
    }

    /// The types of the last execute that sent them.
    pub fn types(&self) -> Option<&[ParamType]> {
        self.types.as_deref()
    }

    /// Appends COM_STMT_SEND_LONG_DATA bytes to parameter `param`. Errors are
    /// remembered and reported by the next execute, as MySQL does (the command
    /// itself has no reply).
    pub fn add_long_data(&mut self, param: u16, data: &[u8], max_bytes: usize) {
        if self.long_data_error.is_some() {
            return;
        }
        let Some(slot) = self.long_data.get_mut(usize::from(param)) else {
            self.long_data_error = Some(Error::WrongArguments(
                "mysqld_stmt_send_long_data".to_string(),
            ));
            return;
        };
        self.long_data_bytes = self.long_data_bytes.saturating_add(data.len());
        if self.long_data_bytes > max_bytes {
            self.long_data_error = Some(Error::PacketTooLarge);
            self.clear_long_data();
            return;
        }
        slot.get_or_insert_with(Vec::new).extend_from_slice(data);
    }

    /// Forgets long data (after an execute, and on COM_STMT_RESET).
    pub fn clear_long_data(&mut self) {
        for slot in &mut self.long_data {
            *slot = None;
        }
        self.long_data_bytes = 0;
    }

    /// Forgets long data and a pending long-data error (COM_STMT_RESET).
    pub fn reset(&mut self) {
        self.clear_long_data();
        self.long_data_error = None;
    }
}

/// The fixed header of COM_STMT_EXECUTE (after the command byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecuteHeader {
    /// The statement id from the prepare response.
    pub statement_id: u32,
    /// Cursor flags (ignored: results are always sent whole).
    pub flags: u8,
}

/// Reads stmt_id, flags and iteration_count.
pub fn parse_execute_header(c: &mut Cursor<'_>) -> Result<ExecuteHeader, Error> {
    let statement_id = c.u32()?;
    let flags = c.u8()?;
    let _iteration_count = c.u32()?;
    Ok(ExecuteHeader {
        statement_id,
        flags,
    })
}

fn wrong_arguments() -> Error {
    Error::WrongArguments(EXECUTE_COMMAND.to_string())
}

/// Decodes the parameter block of COM_STMT_EXECUTE into values, using and
/// updating the statement's remembered types and consuming its long data.
/// Anything inconsistent is ER_WRONG_ARGUMENTS (1210), as in MySQL.
pub fn decode_execute_params(
    c: &mut Cursor<'_>,
    state: &mut PreparedParams,
) -> Result<Vec<Value>, Error> {
    if let Some(err) = state.long_data_error.take() {
        state.clear_long_data();
        return Err(err);
    }
    let n = usize::from(state.count);
    if n == 0 {
        return Ok(Vec::new());
    }
    let bad = |_: Truncated| wrong_arguments();
    let null_bitmap = c.take(n.div_ceil(8)).map_err(bad)?;
    match c.u8().map_err(bad)? {
        0 => {}
        1 => {
            let mut types = Vec::with_capacity(n);
            for _ in 0..n {
                let code = c.u8().map_err(bad)?;
                let flags = c.u8().map_err(bad)?;
                types.push(ParamType {
                    code,
                    unsigned: flags & 0x80 != 0,
                });
            }
            state.types = Some(types);
        }
        _ => return Err(wrong_arguments()),
    }
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        if let Some(data) = state.long_data[i].take() {
            values.push(Value::Bytes(data));
            continue;
        }
        if null_bitmap[i / 8] & (1 << (i % 8)) != 0 {
            values.push(Value::Null);
            continue;
        }
        let ty = state
            .types
            .as_ref()
            .and_then(|t| t.get(i))
            .copied()
            .ok_or_else(wrong_arguments)?;
        values.push(
            decode_binary_value(c, ty)
                .map_err(bad)?
                .ok_or_else(wrong_arguments)?,
        );
    }
    state.clear_long_data();
    Ok(values)
}

/// One parameter value in the binary protocol. `Ok(None)`: an unknown type.
fn decode_binary_value(c: &mut Cursor<'_>, ty: ParamType) -> Result<Option<Value>, Truncated> {
    let int = |v: u64, signed: i64| {
        if ty.unsigned {
            Value::UInt(v)
        } else {
            Value::Int(signed)
        }
    };
    let v = match ty.code {
        0x06 => Value::Null,
        0x01 => {
            let b = c.u8()?;
            int(u64::from(b), i64::from(b as i8))
        }
        0x02 | 0x0d => {
            let v = c.u16()?;
            int(u64::from(v), i64::from(v as i16))
        }
        0x03 | 0x09 => {
            let v = c.u32()?;
            int(u64::from(v), i64::from(v as i32))
        }
        0x08 => {
            let v = c.u64()?;
            int(v, v as i64)
        }
        0x04 => Value::Double(f64::from(f32::from_bits(c.u32()?))),
        0x05 => Value::Double(f64::from_bits(c.u64()?)),
        0x0a => decode_datetime(c, true)?,
        0x07 | 0x0c => decode_datetime(c, false)?,
        0x0b => decode_time(c)?,
        0x00 | 0xf6 => {
            let bytes = c.lenenc_bytes()?;
            match std::str::from_utf8(bytes)
                .ok()
                .and_then(|s| s.parse::<Decimal>().ok())
            {
                Some(d) => Value::Decimal(d),
                None => Value::Bytes(bytes.to_vec()),
            }
        }
        0x0f | 0x10 | 0xf5 | 0xf7..=0xff => Value::Bytes(c.lenenc_bytes()?.to_vec()),
        _ => return Ok(None),
    };
    Ok(Some(v))
}

/// DATE / DATETIME / TIMESTAMP: length 0, 4, 7 or 11, then
/// year `int<2>`, month, day, hour, minute, second `int<1>`, microseconds `int<4>`.
/// A zero or impossible date becomes its text ("0000-00-00") for the engine to judge.
fn decode_datetime(c: &mut Cursor<'_>, date_only: bool) -> Result<Value, Truncated> {
    let len = c.u8()?;
    let mut b = Cursor::new(c.take(usize::from(len))?);
    let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut micros) =
        (0u16, 0u8, 0u8, 0u8, 0u8, 0u8, 0u32);
    match len {
        0 => {}
        4 | 7 | 11 => {
            year = b.u16()?;
            month = b.u8()?;
            day = b.u8()?;
            if len >= 7 {
                hour = b.u8()?;
                minute = b.u8()?;
                second = b.u8()?;
            }
            if len == 11 {
                micros = b.u32()?;
            }
        }
        _ => return Err(Truncated),
    }
    let date = NaiveDate::from_ymd_opt(i32::from(year), u32::from(month), u32::from(day));
    let time = NaiveTime::from_hms_micro_opt(
        u32::from(hour),
        u32::from(minute),
        u32::from(second),
        micros,
    );
    Ok(match (date, time) {
        (Some(d), _) if date_only => Value::Date(d),
        (Some(d), Some(t)) => Value::DateTime(NaiveDateTime::new(d, t)),
        _ if date_only => Value::Bytes(format!("{year:04}-{month:02}-{day:02}").into_bytes()),
        _ => {
            let mut s = format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}");
            if micros != 0 {
                s.push_str(&format!(".{micros:06}"));
            }
            Value::Bytes(s.into_bytes())
        }
    })
}

/// TIME: length 0, 8 or 12, then is_negative `int<1>`, days `int<4>`, hour, minute,
/// second `int<1>`, microseconds `int<4>`. Canyon's values have no TIME type, so it
/// becomes the text MySQL would print ("-838:59:59").
fn decode_time(c: &mut Cursor<'_>) -> Result<Value, Truncated> {
    let len = c.u8()?;
    let mut b = Cursor::new(c.take(usize::from(len))?);
    let (mut negative, mut days, mut hour, mut minute, mut second, mut micros) =
        (false, 0u32, 0u8, 0u8, 0u8, 0u32);
    match len {
        0 => {}
        8 | 12 => {
            negative = b.u8()? != 0;
            days = b.u32()?;
            hour = b.u8()?;
            minute = b.u8()?;
            second = b.u8()?;
            if len == 12 {
                micros = b.u32()?;
            }
        }
        _ => return Err(Truncated),
    }
    let hours = u64::from(days) * 24 + u64::from(hour);
    let mut s = format!(
        "{}{hours:02}:{minute:02}:{second:02}",
        if negative { "-" } else { "" }
    );
    if micros != 0 {
        s.push_str(&format!(".{micros:06}"));
    }
    Ok(Value::Bytes(s.into_bytes()))
}

/// Parses COM_STMT_SEND_LONG_DATA (after the command byte):
/// stmt_id `int<4>`, param_id `int<2>`, data `string<EOF>`.
pub fn parse_long_data(payload: &[u8]) -> Result<(u32, u16, &[u8]), Truncated> {
    let mut c = Cursor::new(payload);
    let id = c.u32()?;
    let param = c.u16()?;
    Ok((id, param, c.rest()))
}

/// Appends the first packet of the COM_STMT_PREPARE response (COM_STMT_PREPARE_OK).
pub fn write_prepare_ok(out: &mut Vec<u8>, statement_id: u32, columns: u16, params: u16) {
    out.push(0x00);
    put_u32(out, statement_id);
    put_u16(out, columns);
    put_u16(out, params);
    out.push(0); // filler
    put_u16(out, 0); // warnings
}

/// The column definition sent for each `?` parameter of a prepared statement.
pub fn parameter_column() -> Column {
    Column {
        schema: String::new(),
        table: String::new(),
        org_table: String::new(),
        name: "?".to_string(),
        org_name: String::new(),
        charset: charset::BINARY,
        length: 0,
        column_type: ColumnType::VarString,
        flags: column_flags::BINARY,
        decimals: 0,
    }
}

/// Appends one ProtocolBinary::ResultsetRow payload.
pub fn write_binary_row(out: &mut Vec<u8>, columns: &[Column], row: &[Value]) {
    out.push(0x00);
    let bitmap_at = out.len();
    out.resize(bitmap_at + (columns.len() + 7 + 2) / 8, 0);
    for (i, col) in columns.iter().enumerate() {
        let value = row.get(i).unwrap_or(&Value::Null);
        if matches!(value, Value::Null) || col.column_type == ColumnType::Null {
            let bit = i + 2;
            out[bitmap_at + bit / 8] |= 1 << (bit % 8);
            continue;
        }
        match col.column_type {
            ColumnType::LongLong => out.extend_from_slice(&int_bits(value).to_le_bytes()),
            ColumnType::Long | ColumnType::Int24 => {
                out.extend_from_slice(&int_bits(value).to_le_bytes()[..4])
            }
            // MariaDB's YEAR(2), a YEAR column of length 2, sends the
            // year's last two digits (the client pads them to two).
            ColumnType::Year if col.length == 2 => {
                out.extend_from_slice(&(int_bits(value) % 100).to_le_bytes()[..2])
            }
            ColumnType::Short | ColumnType::Year => {
                out.extend_from_slice(&int_bits(value).to_le_bytes()[..2])
            }
            ColumnType::Tiny => out.push(int_bits(value) as u8),
            ColumnType::Double => out.extend_from_slice(&as_f64(value).to_le_bytes()),
            ColumnType::Float => out.extend_from_slice(&(as_f64(value) as f32).to_le_bytes()),
            ColumnType::Date => write_binary_datetime(out, value, true),
            ColumnType::DateTime | ColumnType::Timestamp => {
                write_binary_datetime(out, value, false)
            }
            ColumnType::Time => write_binary_time(out, value),
            ColumnType::Decimal
            | ColumnType::NewDecimal
            | ColumnType::VarChar
            | ColumnType::Bit
            | ColumnType::Json
            | ColumnType::Blob
            | ColumnType::VarString
            | ColumnType::String
            | ColumnType::Null => write_text_value(out, value, col),
        }
    }
}

/// The two's-complement bits of a value sent in an integer column. The engine
/// gives integer columns integer values; the other arms keep the framing intact
/// if it does not.
fn int_bits(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        Value::UInt(u) => *u,
        Value::Double(d) => d.round() as i64 as u64,
        Value::Decimal(d) => {
            let r = d.round();
            r.to_i64()
                .map(|i| i as u64)
                .or_else(|| r.to_u64())
                .unwrap_or(0)
        }
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            let s = s.trim();
            s.parse::<i64>()
                .map(|i| i as u64)
                .or_else(|_| s.parse::<u64>())
                .unwrap_or(0)
        }
        Value::Date(d) => {
            (d.year() as i64 * 10_000 + i64::from(d.month()) * 100 + i64::from(d.day())) as u64
        }
        Value::Json(_) => v.to_i64().unwrap_or(0) as u64,
        Value::DateTime(_) | Value::Stamp(_) | Value::Null => 0,
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Decimal(d) => d.to_f64().unwrap_or(0.0),
        Value::Bytes(b) => String::from_utf8_lossy(b).trim().parse().unwrap_or(0.0),
        Value::Json(_) => v.to_f64().unwrap_or(0.0),
        Value::Date(_) | Value::DateTime(_) | Value::Stamp(_) | Value::Null => 0.0,
    }
}

/// Binary DATE/DATETIME/TIMESTAMP: the shortest of the lengths 0, 4, 7, 11 that
/// holds the value (MySQL's `net_store_datetime`).
fn write_binary_datetime(out: &mut Vec<u8>, value: &Value, date_only: bool) {
    let dt = match value {
        Value::DateTime(dt) => Some(*dt),
        // A TIMESTAMP column's value shows in the session's time zone.
        Value::Stamp(s) => Some(s.local),
        Value::Date(d) => d.and_hms_opt(0, 0, 0),
        Value::Bytes(b) => parse_datetime_text(&String::from_utf8_lossy(b)),
        _ => None,
    };
    // Length 0 is the zero date '0000-00-00' (and NULL's placeholder).
    let Some(dt) = dt.filter(|dt| !canyon_sql::types::datetime::is_zero(dt)) else {
        out.push(0);
        return;
    };
    let micros = dt.and_utc().timestamp_subsec_micros().min(999_999);
    let has_time = dt.hour() != 0 || dt.minute() != 0 || dt.second() != 0;
    let len: u8 = if date_only {
        4
    } else if micros != 0 {
        11
    } else if has_time {
        7
    } else {
        4
    };
    out.push(len);
    out.extend_from_slice(&(dt.year().clamp(0, 9999) as u16).to_le_bytes());
    out.push(dt.month() as u8);
    out.push(dt.day() as u8);
    if len >= 7 {
        out.push(dt.hour() as u8);
        out.push(dt.minute() as u8);
        out.push(dt.second() as u8);
    }
    if len == 11 {
        out.extend_from_slice(&micros.to_le_bytes());
    }
}

fn parse_datetime_text(s: &str) -> Option<NaiveDateTime> {
    let s = s.trim();
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
}

/// Binary TIME from the text form `[-]H+:MM:SS[.ffffff]`; anything else is sent
/// as the zero time.
fn write_binary_time(out: &mut Vec<u8>, value: &Value) {
    let parsed = match value {
        Value::Bytes(b) => parse_time_text(&String::from_utf8_lossy(b)),
        Value::DateTime(dt) => Some((
            false,
            u64::from(dt.hour()),
            dt.minute() as u8,
            dt.second() as u8,
            dt.and_utc().timestamp_subsec_micros().min(999_999),
        )),
        _ => None,
    };
    let Some((negative, hours, minute, second, micros)) = parsed else {
        out.push(0);
        return;
    };
    let days = u32::try_from(hours / 24).unwrap_or(u32::MAX);
    if days == 0 && hours == 0 && minute == 0 && second == 0 && micros == 0 {
        out.push(0);
        return;
    }
    out.push(if micros != 0 { 12 } else { 8 });
    out.push(u8::from(negative));
    out.extend_from_slice(&days.to_le_bytes());
    out.push((hours % 24) as u8);
    out.push(minute);
    out.push(second);
    if micros != 0 {
        out.extend_from_slice(&micros.to_le_bytes());
    }
}

type TimeParts = (bool, u64, u8, u8, u32);

fn parse_time_text(s: &str) -> Option<TimeParts> {
    let s = s.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (hms, frac) = s.split_once('.').unwrap_or((s, ""));
    let mut parts = hms.split(':');
    let h: u64 = parts.next()?.parse().ok()?;
    let m: u8 = parts.next()?.parse().ok()?;
    let sec: u8 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || m > 59 || sec > 59 {
        return None;
    }
    let micros = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(6).collect();
        let v: u32 = digits.parse().ok()?;
        v * 10u32.pow(6 - digits.len() as u32)
    };
    Some((negative, h, m, sec, micros))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::put_lenenc_bytes;

    fn ty(code: u8, unsigned: bool) -> [u8; 2] {
        [code, if unsigned { 0x80 } else { 0 }]
    }

    /// Builds the part of COM_STMT_EXECUTE after iteration_count.
    fn params_block(nulls: &[bool], types: Option<&[[u8; 2]]>, values: &[u8]) -> Vec<u8> {
        let mut p = vec![0u8; nulls.len().div_ceil(8)];
        for (i, &n) in nulls.iter().enumerate() {
            if n {
                p[i / 8] |= 1 << (i % 8);
            }
        }
        match types {
            Some(t) => {
                p.push(1);
                for pair in t {
                    p.extend_from_slice(pair);
                }
            }
            None => p.push(0),
        }
        p.extend_from_slice(values);
        p
    }

    #[test]
    fn execute_header() {
        let mut p = Vec::new();
        put_u32(&mut p, 9);
        p.push(0);
        put_u32(&mut p, 1);
        let h = parse_execute_header(&mut Cursor::new(&p)).expect("header");
        assert_eq!(h.statement_id, 9);
        assert!(parse_execute_header(&mut Cursor::new(&p[..8])).is_err());
    }

    #[test]
    fn decodes_integer_types_and_unsigned_flag() {
        let mut state = PreparedParams::new(5);
        let mut values = vec![0xffu8]; // TINY -1
        values.extend_from_slice(&0xfffeu16.to_le_bytes()); // SHORT unsigned 65534
        values.extend_from_slice(&(-5i32).to_le_bytes()); // LONG -5
        values.extend_from_slice(&u64::MAX.to_le_bytes()); // LONGLONG unsigned
        values.extend_from_slice(&(-9i64).to_le_bytes()); // LONGLONG signed
        let types = [
            ty(0x01, false),
            ty(0x02, true),
            ty(0x03, false),
            ty(0x08, true),
            ty(0x08, false),
        ];
        let p = params_block(&[false; 5], Some(&types), &values);
        let v = decode_execute_params(&mut Cursor::new(&p), &mut state).expect("decode");
        assert_eq!(
            v,
            vec![
                Value::Int(-1),
                Value::UInt(65534),
                Value::Int(-5),
                Value::UInt(u64::MAX),
                Value::Int(-9)
            ]
        );
    }

    #[test]
    fn re_execution_without_types_reuses_the_last_ones() {
        let mut state = PreparedParams::new(2);
        let mut values = 7i32.to_le_bytes().to_vec();
        put_lenenc_bytes(&mut values, b"abc");
        let p = params_block(
            &[false, false],
            Some(&[ty(0x03, false), ty(0xfe, false)]),
            &values,
        );
        let first = decode_execute_params(&mut Cursor::new(&p), &mut state).expect("first");
        assert_eq!(first, vec![Value::Int(7), Value::Bytes(b"abc".to_vec())]);

        // sysbench: same statement, new values, new_params_bound_flag = 0.
        let mut values = 8i32.to_le_bytes().to_vec();
        put_lenenc_bytes(&mut values, b"xyz");
        let p = params_block(&[false, false], None, &values);
        let second = decode_execute_params(&mut Cursor::new(&p), &mut state).expect("second");
        assert_eq!(second, vec![Value::Int(8), Value::Bytes(b"xyz".to_vec())]);

        // A NULL takes no bytes.
        let p = params_block(&[true, false], None, b"\x01q");
        let third = decode_execute_params(&mut Cursor::new(&p), &mut state).expect("third");
        assert_eq!(third, vec![Value::Null, Value::Bytes(b"q".to_vec())]);
    }

    #[test]
    fn missing_types_and_short_data_are_wrong_arguments() {
        let mut state = PreparedParams::new(1);
        let p = params_block(&[false], None, &7i32.to_le_bytes());
        let err = decode_execute_params(&mut Cursor::new(&p), &mut state).expect_err("no types");
        assert_eq!(err, Error::WrongArguments(EXECUTE_COMMAND.into()));

        let p = params_block(&[false], Some(&[ty(0x08, false)]), &[1, 2, 3]);
        let err = decode_execute_params(&mut Cursor::new(&p), &mut state).expect_err("short");
        assert_eq!(err, Error::WrongArguments(EXECUTE_COMMAND.into()));

        let p = params_block(&[false], Some(&[ty(0x42, false)]), &[1]);
        let err = decode_execute_params(&mut Cursor::new(&p), &mut state).expect_err("type");
        assert_eq!(err, Error::WrongArguments(EXECUTE_COMMAND.into()));

        let err = decode_execute_params(&mut Cursor::new(&[]), &mut state).expect_err("empty");
        assert_eq!(err, Error::WrongArguments(EXECUTE_COMMAND.into()));

        // Every truncation of a valid block fails cleanly.
        let mut values = 1.5f64.to_le_bytes().to_vec();
        put_lenenc_bytes(&mut values, b"hello");
        let p = params_block(
            &[false, false],
            Some(&[ty(0x05, false), ty(0xfd, false)]),
            &values,
        );
        for len in 0..p.len() {
            let mut s = PreparedParams::new(2);
            assert!(decode_execute_params(&mut Cursor::new(&p[..len]), &mut s).is_err());
        }
        let mut s = PreparedParams::new(2);
        let ok = decode_execute_params(&mut Cursor::new(&p), &mut s).expect("full");
        assert_eq!(
            ok,
            vec![Value::Double(1.5), Value::Bytes(b"hello".to_vec())]
        );
    }

    #[test]
    fn decodes_floats_decimals_and_temporals() {
        let mut state = PreparedParams::new(7);
        let mut v = 0.5f32.to_le_bytes().to_vec();
        put_lenenc_bytes(&mut v, b"12.340");
        v.extend_from_slice(&[4, 0xe8, 0x07, 2, 29]); // DATE 2024-02-29
        v.extend_from_slice(&[11, 0xe8, 0x07, 2, 29, 13, 14, 15]);
        v.extend_from_slice(&250u32.to_le_bytes()); // DATETIME .000250
        v.push(0); // TIMESTAMP zero
        v.extend_from_slice(&[8, 1, 1, 0, 0, 0, 2, 3, 4]); // TIME -26:03:04
        put_lenenc_bytes(&mut v, b"1.2.3"); // NEWDECIMAL that does not parse
        let types = [
            ty(0x04, false),
            ty(0xf6, false),
            ty(0x0a, false),
            ty(0x0c, false),
            ty(0x07, false),
            ty(0x0b, false),
            ty(0xf6, false),
        ];
        let p = params_block(&[false; 7], Some(&types), &v);
        let got = decode_execute_params(&mut Cursor::new(&p), &mut state).expect("decode");
        let date = NaiveDate::from_ymd_opt(2024, 2, 29).expect("date");
        assert_eq!(got[0], Value::Double(0.5));
        assert_eq!(got[1], Value::Decimal("12.340".parse().expect("dec")));
        assert_eq!(got[2], Value::Date(date));
        assert_eq!(
            got[3],
            Value::DateTime(date.and_hms_micro_opt(13, 14, 15, 250).expect("dt"))
        );
        assert_eq!(got[4], Value::Bytes(b"0000-00-00 00:00:00".to_vec()));
        assert_eq!(got[5], Value::Bytes(b"-26:03:04".to_vec()));
        assert_eq!(got[6], Value::Bytes(b"1.2.3".to_vec()));
    }

    #[test]
    fn long_data_replaces_the_value_and_is_forgotten() {
        let mut state = PreparedParams::new(2);
        state.add_long_data(1, b"hello ", 100);
        state.add_long_data(1, b"world", 100);
        // Parameter 1 has no bytes in the packet.
        let p = params_block(
            &[false, false],
            Some(&[ty(0x03, false), ty(0xfc, false)]),
            &3i32.to_le_bytes(),
        );
        let got = decode_execute_params(&mut Cursor::new(&p), &mut state).expect("decode");
        assert_eq!(
            got,
            vec![Value::Int(3), Value::Bytes(b"hello world".to_vec())]
        );
        // Next execute: the long data is gone, so parameter 1 must be in the packet.
        let err = decode_execute_params(&mut Cursor::new(&p), &mut state).expect_err("gone");
        assert_eq!(err, Error::WrongArguments(EXECUTE_COMMAND.into()));

        state.add_long_data(5, b"x", 100);
        let err = decode_execute_params(&mut Cursor::new(&p), &mut state).expect_err("bad id");
        assert_eq!(
            err,
            Error::WrongArguments("mysqld_stmt_send_long_data".into())
        );

        state.add_long_data(0, &[0; 80], 100);
        state.add_long_data(0, &[0; 80], 100);
        let err = decode_execute_params(&mut Cursor::new(&p), &mut state).expect_err("big");
        assert_eq!(err, Error::PacketTooLarge);
    }

    fn col(t: ColumnType) -> Column {
        Column {
            column_type: t,
            ..parameter_column()
        }
    }

    #[test]
    fn binary_row_encoding() {
        let cols = vec![
            col(ColumnType::LongLong),
            col(ColumnType::Long),
            col(ColumnType::Short),
            col(ColumnType::Tiny),
            col(ColumnType::Double),
            col(ColumnType::Float),
            col(ColumnType::VarString),
            col(ColumnType::Date),
            col(ColumnType::DateTime),
            col(ColumnType::NewDecimal),
            col(ColumnType::Time),
        ];
        let date = NaiveDate::from_ymd_opt(2024, 1, 2).expect("date");
        let row = vec![
            Value::Int(-2),
            Value::Null,
            Value::UInt(513),
            Value::Int(-1),
            Value::Double(0.25),
            Value::Double(0.5),
            Value::Bytes(b"ab".to_vec()),
            Value::Date(date),
            Value::DateTime(date.and_hms_opt(3, 4, 5).expect("dt")),
            Value::Decimal("1.50".parse().expect("dec")),
            Value::Bytes(b"25:00:01".to_vec()),
        ];
        let mut out = Vec::new();
        write_binary_row(&mut out, &cols, &row);
        let mut want = vec![0x00];
        // 11 columns + 2 offset bits = 13 bits -> 2 bytes; column 1 NULL = bit 3.
        want.extend_from_slice(&[0b0000_1000, 0]);
        want.extend_from_slice(&(-2i64).to_le_bytes());
        want.extend_from_slice(&513u16.to_le_bytes());
        want.push(0xff);
        want.extend_from_slice(&0.25f64.to_le_bytes());
        want.extend_from_slice(&0.5f32.to_le_bytes());
        want.extend_from_slice(b"\x02ab");
        want.extend_from_slice(&[4, 0xe8, 0x07, 1, 2]);
        want.extend_from_slice(&[7, 0xe8, 0x07, 1, 2, 3, 4, 5]);
        want.extend_from_slice(b"\x041.50");
        want.extend_from_slice(&[8, 0, 1, 0, 0, 0, 1, 0, 1]);
        assert_eq!(out, want);
    }

    #[test]
    fn binary_row_null_bitmap_offsets() {
        let cols: Vec<Column> = (0..7).map(|_| col(ColumnType::Long)).collect();
        let mut row = vec![Value::Int(1); 7];
        row[6] = Value::Null; // bit 8 -> second byte, bit 0
        row[0] = Value::Null; // bit 2
        let mut out = Vec::new();
        write_binary_row(&mut out, &cols, &row);
        assert_eq!(&out[..3], &[0, 0b100, 0b1]);
        assert_eq!(out.len(), 3 + 5 * 4);
        // Datetime with micros uses the 11-byte form.
        let mut out = Vec::new();
        let dt = NaiveDate::from_ymd_opt(2000, 1, 1)
            .and_then(|d| d.and_hms_micro_opt(0, 0, 0, 1))
            .expect("dt");
        write_binary_row(
            &mut out,
            &[col(ColumnType::Timestamp)],
            &[Value::DateTime(dt)],
        );
        assert_eq!(out, vec![0, 0, 11, 0xd0, 0x07, 1, 1, 0, 0, 0, 1, 0, 0, 0]);
        // A TIMESTAMP column's value is sent as its session-local reading.
        let mut out = Vec::new();
        let stamp = canyon_sql::Stamp {
            utc: dt + chrono::Duration::hours(5),
            local: dt,
        };
        write_binary_row(
            &mut out,
            &[col(ColumnType::Timestamp)],
            &[Value::Stamp(stamp)],
        );
        assert_eq!(out, vec![0, 0, 11, 0xd0, 0x07, 1, 1, 0, 0, 0, 1, 0, 0, 0]);
        // The zero date is length 0 (MySQL's `net_store_datetime`).
        let zero = canyon_sql::types::datetime::ZERO_DATETIME;
        let mut out = Vec::new();
        write_binary_row(
            &mut out,
            &[col(ColumnType::Date), col(ColumnType::DateTime)],
            &[Value::Date(zero.date()), Value::DateTime(zero)],
        );
        assert_eq!(out, vec![0, 0, 0, 0]);
    }

    #[test]
    fn prepare_ok_layout() {
        let mut out = Vec::new();
        write_prepare_ok(&mut out, 3, 2, 1);
        assert_eq!(out, vec![0, 3, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0]);
        assert_eq!(
            parse_long_data(&[1, 0, 0, 0, 2, 0, b'x']),
            Ok((1, 2, &b"x"[..]))
        );
        assert!(parse_long_data(&[1, 0, 0]).is_err());
    }
}
