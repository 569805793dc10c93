//! MySQL's binary JSON (the storage and binlog form of a JSON column, MySQL
//! 5.7's `json_binary`), built from and read back into a [`serde_json::Value`].
//!
//! A document is a type byte followed by the value:
//!
//! ```text
//! 0x00 small object   0x01 large object   0x02 small array   0x03 large array
//! 0x04 literal (0x00 null, 0x01 true, 0x02 false)
//! 0x05 int16  0x06 uint16  0x07 int32  0x08 uint32  0x09 int64  0x0a uint64
//! 0x0b double (8 bytes)    0x0c string (length, UTF-8)    0x0f opaque
//! ```
//!
//! Integers and doubles are little-endian. A string's length is a variable
//! length integer: 7 bits per byte, least significant group first, the top
//! bit set on every byte but the last. Containers:
//!
//! ```text
//! object: count | size | key entries | value entries | keys | values
//! array:  count | size | value entries | values
//!
//! key entry:   offset (2|4) | length u16
//! value entry: type u8 | offset (2|4), or the value itself when it fits
//! ```
//!
//! `count`, `size` (bytes of the whole container) and offsets are 2 bytes in
//! the small forms and 4 in the large ones; offsets count from the start of
//! the container (its `count` field). Literals and 16-bit integers (and
//! 32-bit ones in a large container) are stored inline in their value entry.
//! Object keys are sorted by length, then bytewise, so a reader can binary
//! search them. Each container is written small when every offset fits in
//! 16 bits, else large, decided per container as MySQL does.
//!
//! Numbers follow MySQL's parser: an integer that fits `i64` is signed and
//! takes the smallest of int16 / int32 / int64; a larger one is uint64;
//! anything else is a double. Not implemented: opaque values (MySQL's
//! DATE, TIME, DECIMAL ... inside JSON, which JSON text cannot produce) are
//! refused by the decoder.

use serde_json::{Map, Number, Value};

use crate::Error;

const SMALL_OBJECT: u8 = 0x00;
const LARGE_OBJECT: u8 = 0x01;
const SMALL_ARRAY: u8 = 0x02;
const LARGE_ARRAY: u8 = 0x03;
const LITERAL: u8 = 0x04;
const INT16: u8 = 0x05;
const UINT16: u8 = 0x06;
const INT32: u8 = 0x07;
const UINT32: u8 = 0x08;
const INT64: u8 = 0x09;
const UINT64: u8 = 0x0a;
const DOUBLE: u8 = 0x0b;
const STRING: u8 = 0x0c;
const OPAQUE: u8 = 0x0f;

const LITERAL_NULL: u8 = 0x00;
const LITERAL_TRUE: u8 = 0x01;
const LITERAL_FALSE: u8 = 0x02;

/// Deepest nesting MySQL accepts in a JSON document.
const MAX_DEPTH: usize = 100;

/// Encodes `v` as a binary JSON document (type byte first).
pub fn encode(v: &Value) -> Result<Vec<u8>, Error> {
    let (ty, body) = encode_value(v, 1)?;
    let mut out = Vec::with_capacity(1 + body.len());
    out.push(ty);
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes a binary JSON document. An empty document is JSON null (MySQL
/// reads a zero-length JSON column value so).
pub fn decode(doc: &[u8]) -> Result<Value, Error> {
    let Some((&ty, body)) = doc.split_first() else {
        return Ok(Value::Null);
    };
    decode_value(ty, body, 0, 1)
}

/// The type byte and body of a scalar or container.
fn encode_value(v: &Value, depth: usize) -> Result<(u8, Vec<u8>), Error> {
    if depth > MAX_DEPTH {
        return Err(Error::Invalid(format!(
            "JSON document nested over {MAX_DEPTH} levels"
        )));
    }
    Ok(match v {
        Value::Null => (LITERAL, vec![LITERAL_NULL]),
        Value::Bool(true) => (LITERAL, vec![LITERAL_TRUE]),
        Value::Bool(false) => (LITERAL, vec![LITERAL_FALSE]),
        Value::Number(n) => encode_number(n),
        Value::String(s) => {
            let mut out = Vec::with_capacity(s.len() + 5);
            put_varlen(&mut out, s.len());
            out.extend_from_slice(s.as_bytes());
            (STRING, out)
        }
        Value::Array(items) => match encode_container(None, items, false, depth)? {
            Some(b) => (SMALL_ARRAY, b),
            None => (
                LARGE_ARRAY,
                encode_container(None, items, true, depth)?.ok_or_else(too_big)?,
            ),
        },
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            for (k, _) in &entries {
                if k.len() > usize::from(u16::MAX) {
                    return Err(Error::Invalid(format!("JSON key of {} bytes", k.len())));
                }
            }
            entries.sort_by(|a, b| {
                a.0.len()
                    .cmp(&b.0.len())
                    .then(a.0.as_bytes().cmp(b.0.as_bytes()))
            });
            let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            let vals: Vec<Value> = entries.iter().map(|(_, v)| (*v).clone()).collect();
            match encode_container(Some(&keys), &vals, false, depth)? {
                Some(b) => (SMALL_OBJECT, b),
                None => (
                    LARGE_OBJECT,
                    encode_container(Some(&keys), &vals, true, depth)?.ok_or_else(too_big)?,
                ),
            }
        }
    })
}

fn too_big() -> Error {
    Error::Invalid("JSON document larger than 4 GiB".into())
}

fn encode_number(n: &Number) -> (u8, Vec<u8>) {
    if let Some(i) = n.as_i64() {
        if let Ok(v) = i16::try_from(i) {
            (INT16, v.to_le_bytes().to_vec())
        } else if let Ok(v) = i32::try_from(i) {
            (INT32, v.to_le_bytes().to_vec())
        } else {
            (INT64, i.to_le_bytes().to_vec())
        }
    } else if let Some(u) = n.as_u64() {
        (UINT64, u.to_le_bytes().to_vec())
    } else {
        let f = n
            .as_f64()
            .expect("a serde_json number is an i64, u64 or f64");
        (DOUBLE, f.to_le_bytes().to_vec())
    }
}

/// Whether a scalar of type `ty` lives in its value entry.
fn inlined(ty: u8, large: bool) -> bool {
    matches!(ty, LITERAL | INT16 | UINT16) || (large && matches!(ty, INT32 | UINT32))
}

/// Builds an array (`keys` None) or object body; `Ok(None)` when `large` is
/// false and an offset or the size does not fit 16 bits.
fn encode_container(
    keys: Option<&[&str]>,
    vals: &[Value],
    large: bool,
    depth: usize,
) -> Result<Option<Vec<u8>>, Error> {
    let w = if large { 4 } else { 2 };
    let limit: u64 = if large {
        u64::from(u32::MAX)
    } else {
        u64::from(u16::MAX)
    };
    let n = vals.len();
    let key_entries = keys.map_or(0, |k| k.len() * (w + 2));
    let header = 2 * w + key_entries + n * (1 + w);
    let mut key_data = Vec::new();
    let mut key_offsets = Vec::new();
    for k in keys.unwrap_or(&[]) {
        key_offsets.push(header + key_data.len());
        key_data.extend_from_slice(k.as_bytes());
    }
    let mut value_entries = Vec::with_capacity(n * (1 + w));
    let mut value_data = Vec::new();
    for v in vals {
        let (ty, body) = encode_value(v, depth + 1)?;
        value_entries.push(ty);
        if inlined(ty, large) {
            let mut slot = body;
            slot.resize(w, 0);
            value_entries.extend_from_slice(&slot);
        } else {
            let off = (header + key_data.len() + value_data.len()) as u64;
            if off > limit {
                return Ok(None);
            }
            value_entries.extend_from_slice(&off.to_le_bytes()[..w]);
            value_data.extend_from_slice(&body);
        }
    }
    let size = (header + key_data.len() + value_data.len()) as u64;
    if size > limit || n as u64 > limit {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(size as usize);
    out.extend_from_slice(&(n as u64).to_le_bytes()[..w]);
    out.extend_from_slice(&size.to_le_bytes()[..w]);
    if let Some(ks) = keys {
        for (k, off) in ks.iter().zip(&key_offsets) {
            out.extend_from_slice(&(*off as u64).to_le_bytes()[..w]);
            out.extend_from_slice(&(k.len() as u16).to_le_bytes());
        }
    }
    out.extend_from_slice(&value_entries);
    out.extend_from_slice(&key_data);
    out.extend_from_slice(&value_data);
    debug_assert_eq!(out.len() as u64, size);
    Ok(Some(out))
}

fn put_varlen(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Reads a variable-length length at the start of `buf`: (value, bytes used).
fn get_varlen(buf: &[u8]) -> Result<(usize, usize), Error> {
    let mut n: usize = 0;
    // A length is at most 5 groups (32 bits).
    for (i, &b) in buf.iter().enumerate().take(5) {
        n |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((n, i + 1));
        }
    }
    Err(Error::Malformed("JSON: bad variable-length integer".into()))
}

fn slice(buf: &[u8], at: usize, n: usize) -> Result<&[u8], Error> {
    at.checked_add(n)
        .and_then(|end| buf.get(at..end))
        .ok_or(Error::Truncated("JSON value"))
}

fn le(buf: &[u8], at: usize, n: usize) -> Result<u64, Error> {
    let s = slice(buf, at, n)?;
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(s);
    Ok(u64::from_le_bytes(b))
}

/// Decodes a value of type `ty` whose body starts at `buf[at..]`.
fn decode_value(ty: u8, buf: &[u8], at: usize, depth: usize) -> Result<Value, Error> {
    if depth > MAX_DEPTH + 1 {
        return Err(Error::Malformed("JSON nested too deep".into()));
    }
    Ok(match ty {
        LITERAL => match le(buf, at, 1)? as u8 {
            LITERAL_NULL => Value::Null,
            LITERAL_TRUE => Value::Bool(true),
            LITERAL_FALSE => Value::Bool(false),
            b => return Err(Error::Malformed(format!("JSON literal 0x{b:02x}"))),
        },
        INT16 => Value::from(le(buf, at, 2)? as u16 as i16),
        UINT16 => Value::from(le(buf, at, 2)? as u16),
        INT32 => Value::from(le(buf, at, 4)? as u32 as i32),
        UINT32 => Value::from(le(buf, at, 4)? as u32),
        INT64 => Value::from(le(buf, at, 8)? as i64),
        UINT64 => Value::from(le(buf, at, 8)?),
        DOUBLE => {
            let f = f64::from_bits(le(buf, at, 8)?);
            Value::Number(
                Number::from_f64(f)
                    .ok_or_else(|| Error::Malformed("JSON double is not finite".into()))?,
            )
        }
        STRING => {
            let (n, used) = get_varlen(buf.get(at..).ok_or(Error::Truncated("JSON string"))?)?;
            let s = slice(buf, at + used, n)?;
            Value::String(
                String::from_utf8(s.to_vec())
                    .map_err(|_| Error::Malformed("JSON string is not UTF-8".into()))?,
            )
        }
        SMALL_OBJECT | LARGE_OBJECT | SMALL_ARRAY | LARGE_ARRAY => {
            let large = matches!(ty, LARGE_OBJECT | LARGE_ARRAY);
            let object = matches!(ty, SMALL_OBJECT | LARGE_OBJECT);
            let w = if large { 4 } else { 2 };
            let count = le(buf, at, w)? as usize;
            let size = le(buf, at + w, w)? as usize;
            let c = slice(buf, at, size)?;
            let key_entries = if object { count * (w + 2) } else { 0 };
            let value_entry_at = |i: usize| 2 * w + key_entries + i * (1 + w);
            if value_entry_at(count) > size {
                return Err(Error::Malformed("JSON container entries overrun it".into()));
            }
            let value_at = |i: usize| -> Result<Value, Error> {
                let e = value_entry_at(i);
                let vty = le(c, e, 1)? as u8;
                if inlined(vty, large) {
                    decode_value(vty, c, e + 1, depth + 1)
                } else {
                    let off = le(c, e + 1, w)? as usize;
                    decode_value(vty, c, off, depth + 1)
                }
            };
            if object {
                let mut map = Map::new();
                for i in 0..count {
                    let e = 2 * w + i * (w + 2);
                    let koff = le(c, e, w)? as usize;
                    let klen = le(c, e + w, 2)? as usize;
                    let key = String::from_utf8(slice(c, koff, klen)?.to_vec())
                        .map_err(|_| Error::Malformed("JSON key is not UTF-8".into()))?;
                    map.insert(key, value_at(i)?);
                }
                Value::Object(map)
            } else {
                Value::Array((0..count).map(value_at).collect::<Result<_, _>>()?)
            }
        }
        OPAQUE => {
            return Err(Error::Unsupported(
                "opaque values inside JSON (a MySQL DATE, TIME or DECIMAL in a JSON document)"
                    .into(),
            ))
        }
        t => return Err(Error::Malformed(format!("JSON type 0x{t:02x}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_have_mysqls_bytes() {
        assert_eq!(encode(&json!(null)).expect("enc"), [LITERAL, 0]);
        assert_eq!(encode(&json!(true)).expect("enc"), [LITERAL, 1]);
        assert_eq!(encode(&json!(-2)).expect("enc"), [INT16, 0xfe, 0xff]);
        assert_eq!(
            encode(&json!(70000)).expect("enc"),
            [INT32, 0x70, 0x11, 0x01, 0x00]
        );
        assert_eq!(encode(&json!(u64::MAX)).expect("enc")[0], UINT64);
        assert_eq!(encode(&json!(1.5)).expect("enc")[0], DOUBLE);
        assert_eq!(encode(&json!("ab")).expect("enc"), [STRING, 2, b'a', b'b']);
    }

    #[test]
    fn small_object_layout() {
        // {"a": 1, "bb": "x"}: keys sorted by length, 1 inlined, "x" by offset.
        let doc = encode(&json!({"bb": "x", "a": 1})).expect("enc");
        #[rustfmt::skip]
        let want = [
            SMALL_OBJECT,
            2, 0, 23, 0,                 // count, size
            18, 0, 1, 0,                 // key "a" at 18, length 1
            19, 0, 2, 0,                 // key "bb" at 19, length 2
            INT16, 1, 0,                 // 1, inline
            STRING, 21, 0,               // "x" at 21
            b'a', b'b', b'b',
            1, b'x',
        ];
        assert_eq!(doc, want);
    }

    #[test]
    fn documents_round_trip() {
        let long = "x".repeat(300);
        for v in [
            json!({}),
            json!([]),
            json!({"k": [1, -1, 40000, -40000, 3_000_000_000i64, -3_000_000_000i64,
                         u64::MAX, 2.25, null, true, false, "s", long.clone()],
                   "nested": {"a": {"b": {"c": []}}}, "": ""}),
            json!("just a string"),
            json!(12),
        ] {
            assert_eq!(decode(&encode(&v).expect("enc")).expect("dec"), v);
        }
        assert_eq!(decode(&[]).expect("empty"), Value::Null);
    }

    #[test]
    fn big_containers_switch_to_the_large_form() {
        let big: Vec<Value> = (0..5000)
            .map(|i| json!(format!("value number {i}")))
            .collect();
        let v = json!({"big": big, "n": 70000});
        let doc = encode(&v).expect("enc");
        // The outer object and the array are both over 64 KiB.
        assert_eq!(doc[0], LARGE_OBJECT);
        assert_eq!(decode(&doc).expect("dec"), v);
    }

    #[test]
    fn corrupt_documents_are_errors_not_panics() {
        let doc = encode(&json!({"a": [1, "two", {"b": 3.5}]})).expect("enc");
        for cut in 0..doc.len() {
            let _ = decode(&doc[..cut]);
        }
        assert!(decode(&doc[..doc.len() - 1]).is_err());
        assert!(decode(&[0x42]).is_err());
        let mut deep = json!(1);
        for _ in 0..120 {
            deep = json!([deep]);
        }
        assert!(encode(&deep).is_err());
    }
}
