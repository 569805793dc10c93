//! MySQL 8's JSON data type: the parsed tree, Canyon's binary form, the
//! normalised text, paths, and the order JSON values compare in.
//!
//! # What a JSON value is
//! A JSON column holds one JSON document, validated when it is written
//! (invalid text is MySQL's 3140 ER_INVALID_JSON_TEXT, SQLSTATE 22032) and
//! kept in a binary form of Canyon's own ([`encode`]); at run time a JSON
//! value is [`Value::Json`](crate::types::value::Value::Json) holding the
//! same bytes, so a stored document crosses the engine boundary without being
//! re-parsed. Clients get MySQL's normalised text ([`to_text`]):
//! `{"a": 1, "b": [1, 2]}`, with `", "` and `": "` separators, object keys in
//! MySQL's order and strings escaped as MySQL escapes them.
//!
//! # The binary form
//! One value is a tag byte and a payload; integers are little-endian:
//!
//! ```text
//! 0x00 null    0x01 false    0x02 true
//! 0x03 int     i64                      0x04 uint    u64
//! 0x05 double  f64 bits                 0x06 string  u32 len ++ UTF-8 bytes
//! 0x07 array   u32 n ++ n × u32 end ++ elements
//! 0x08 object  u32 n ++ n × u32 key_end ++ n × u32 value_end ++ keys ++ values
//! 0x09 decimal i128 mantissa ++ u8 scale
//! 0x0A decimal i256 mantissa ++ u8 scale (past 38 digits; 0x09 is
//!      written for every value that fits it)
//! ```
//!
//! An array's `end[i]` is where element `i` ends, counted from the start of
//! the element area (element `i` starts at `end[i-1]`, element 0 at 0); an
//! object's `key_end` and `value_end` do the same for its key area and its
//! value area (which follows the key area). So reaching element `i` or key
//! `k` reads the offset table only: [`JsonRef`] walks a path over the bytes
//! without decoding the rest of the document.
//!
//! Invariants (what [`encode`] writes and every reader relies on):
//!
//! 1. An object's keys are unique and sorted as MySQL sorts them: shorter
//!    keys first, keys of one length bytewise ([`key_order`]). A lookup is a
//!    binary search; two equal documents have equal bytes (up to numbers
//!    spelled differently, see below).
//! 2. Duplicate keys in JSON text keep the last value, as MySQL 8.0.3+ does
//!    (MySQL 5.7 kept the first).
//! 3. Strings are valid UTF-8 (the parser refuses anything else).
//! 4. Numbers are exact: an integer literal is an `int` when it fits i64, a
//!    `uint` when it fits u64, else (like any number with a fraction or an
//!    exponent) a double; a DECIMAL reaches JSON only from SQL
//!    (`JSON_OBJECT('a', 1.50)`, `CAST(1.5 AS JSON)`).
//! 5. Nesting is at most [`MAX_DEPTH`] (MySQL's 3157).
//!
//! Readers of stored bytes never panic on damaged input: a short or
//! inconsistent offset reads as an empty or null value.
//!
//! # Order
//! [`compare`] is MySQL 8's (manual 13.5, "Comparison and Ordering of JSON
//! Values"): values of different types order by type precedence — BOOLEAN >
//! ARRAY > OBJECT > STRING > numbers > NULL — numbers compare by value across
//! int, uint, double and decimal, strings bytewise, arrays element by element
//! (a prefix first), booleans false < true. Objects are equal when they hold
//! the same keys with equal values; MySQL leaves the order of unequal objects
//! unspecified, Canyon orders them by their encoding so the order is total.
//!
//! # Not implemented
//! MySQL's DATE / TIME / DATETIME / OPAQUE JSON scalars (a temporal SQL value
//! becomes a JSON string here); path ranges `[m to n]`; partial in-place
//! updates (every modification re-encodes the document).

use crate::types::decimal::Decimal;
use canyon_common::Error;
use std::cmp::Ordering;

/// Deepest nesting MySQL accepts (3157 ER_JSON_DOCUMENT_TOO_DEEP).
pub const MAX_DEPTH: usize = 100;

const NULL: u8 = 0x00;
const FALSE: u8 = 0x01;
const TRUE: u8 = 0x02;
const INT: u8 = 0x03;
const UINT: u8 = 0x04;
const DOUBLE: u8 = 0x05;
const STRING: u8 = 0x06;
const ARRAY: u8 = 0x07;
const OBJECT: u8 = 0x08;
const DECIMAL: u8 = 0x09;
const WIDE_DECIMAL: u8 = 0x0A;

/// A JSON value as a tree: what the parser builds and the modifying
/// functions (JSON_SET, JSON_MERGE_PATCH, ...) change before re-encoding.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits i64.
    Int(i64),
    /// An integer above i64::MAX that fits u64.
    UInt(u64),
    /// Any other number.
    Double(f64),
    /// A DECIMAL from SQL.
    Decimal(Decimal),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Node>),
    /// An object: keys unique, sorted by [`key_order`].
    Object(Vec<(String, Node)>),
}

/// MySQL's order of object keys: by length, then bytewise.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

impl Node {
    /// Sets `key` to `value` in an object's sorted member list (last wins).
    pub fn object_set(members: &mut Vec<(String, Node)>, key: String, value: Node) {
        match members.binary_search_by(|(k, _)| key_order(k, &key)) {
            Ok(i) => members[i].1 = value,
            Err(i) => members.insert(i, (key, value)),
        }
    }

    /// The value of `key` in an object's member list.
    pub fn object_get<'a>(members: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
        members
            .binary_search_by(|(k, _)| key_order(k, key))
            .ok()
            .map(|i| &members[i].1)
    }

    /// The document's binary form.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        encode_into(self, &mut out);
        out
    }
}

/// Encodes a tree ([`Node::encode`]).
pub fn encode(n: &Node) -> Vec<u8> {
    n.encode()
}

fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u32).to_le_bytes());
}

fn encode_into(n: &Node, out: &mut Vec<u8>) {
    match n {
        Node::Null => out.push(NULL),
        Node::Bool(false) => out.push(FALSE),
        Node::Bool(true) => out.push(TRUE),
        Node::Int(i) => {
            out.push(INT);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Node::UInt(u) => {
            out.push(UINT);
            out.extend_from_slice(&u.to_le_bytes());
        }
        Node::Double(d) => {
            out.push(DOUBLE);
            out.extend_from_slice(&d.to_bits().to_le_bytes());
        }
        Node::Decimal(d) => {
            match d.mantissa_i128() {
                Some(m) => {
                    out.push(DECIMAL);
                    out.extend_from_slice(&m.to_le_bytes());
                }
                None => {
                    out.push(WIDE_DECIMAL);
                    out.extend_from_slice(&d.parts().0.to_le_bytes());
                }
            }
            out.push(d.scale() as u8);
        }
        Node::Str(s) => {
            out.push(STRING);
            put_u32(out, s.len());
            out.extend_from_slice(s.as_bytes());
        }
        Node::Array(items) => {
            out.push(ARRAY);
            put_u32(out, items.len());
            let table = out.len();
            out.resize(table + 4 * items.len(), 0);
            let area = out.len();
            for (i, item) in items.iter().enumerate() {
                encode_into(item, out);
                let end = (out.len() - area) as u32;
                out[table + 4 * i..table + 4 * i + 4].copy_from_slice(&end.to_le_bytes());
            }
        }
        Node::Object(members) => {
            debug_assert!(
                members
                    .windows(2)
                    .all(|w| key_order(&w[0].0, &w[1].0) == Ordering::Less),
                "invariant 1: object keys unique and sorted"
            );
            out.push(OBJECT);
            put_u32(out, members.len());
            let mut end = 0;
            for (k, _) in members {
                end += k.len();
                put_u32(out, end);
            }
            let vtable = out.len();
            out.resize(vtable + 4 * members.len(), 0);
            for (k, _) in members {
                out.extend_from_slice(k.as_bytes());
            }
            let area = out.len();
            for (i, (_, v)) in members.iter().enumerate() {
                encode_into(v, out);
                let end = (out.len() - area) as u32;
                out[vtable + 4 * i..vtable + 4 * i + 4].copy_from_slice(&end.to_le_bytes());
            }
        }
    }
}

/// The JSON type of a value, as JSON_TYPE names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// NULL.
    Null,
    /// BOOLEAN.
    Bool,
    /// INTEGER.
    Int,
    /// UNSIGNED INTEGER.
    UInt,
    /// DOUBLE.
    Double,
    /// DECIMAL.
    Decimal,
    /// STRING.
    Str,
    /// ARRAY.
    Array,
    /// OBJECT.
    Object,
}

impl JsonType {
    /// The name JSON_TYPE returns.
    pub fn name(self) -> &'static str {
        match self {
            JsonType::Null => "NULL",
            JsonType::Bool => "BOOLEAN",
            JsonType::Int => "INTEGER",
            JsonType::UInt => "UNSIGNED INTEGER",
            JsonType::Double => "DOUBLE",
            JsonType::Decimal => "DECIMAL",
            JsonType::Str => "STRING",
            JsonType::Array => "ARRAY",
            JsonType::Object => "OBJECT",
        }
    }

    /// MySQL's precedence for comparing values of different types (higher
    /// is greater); numbers share one rank.
    fn rank(self) -> u8 {
        match self {
            JsonType::Null => 0,
            JsonType::Int | JsonType::UInt | JsonType::Double | JsonType::Decimal => 1,
            JsonType::Str => 2,
            JsonType::Object => 3,
            JsonType::Array => 4,
            JsonType::Bool => 5,
        }
    }
}

/// A view of one encoded value: reads it in place.
#[derive(Debug, Clone, Copy)]
pub struct JsonRef<'a> {
    bytes: &'a [u8],
}

fn u32_at(b: &[u8], at: usize) -> usize {
    b.get(at..at + 4)
        .map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]) as usize)
        .unwrap_or(0)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|x| x.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

impl<'a> JsonRef<'a> {
    /// A view of an encoded document.
    pub fn new(bytes: &'a [u8]) -> JsonRef<'a> {
        JsonRef { bytes }
    }

    /// The encoded bytes of this value.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The value's type.
    pub fn kind(&self) -> JsonType {
        match self.bytes.first() {
            Some(&FALSE) | Some(&TRUE) => JsonType::Bool,
            Some(&INT) => JsonType::Int,
            Some(&UINT) => JsonType::UInt,
            Some(&DOUBLE) => JsonType::Double,
            Some(&DECIMAL) | Some(&WIDE_DECIMAL) => JsonType::Decimal,
            Some(&STRING) => JsonType::Str,
            Some(&ARRAY) => JsonType::Array,
            Some(&OBJECT) => JsonType::Object,
            _ => JsonType::Null,
        }
    }

    /// Number of elements (array) or members (object); 1 for a scalar.
    pub fn len(&self) -> usize {
        match self.kind() {
            JsonType::Array | JsonType::Object => u32_at(self.bytes, 1),
            _ => 1,
        }
    }

    /// Whether an array or object is empty (a scalar never is).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The string of a STRING value.
    pub fn as_str(&self) -> Option<&'a str> {
        if self.kind() != JsonType::Str {
            return None;
        }
        let len = u32_at(self.bytes, 1);
        std::str::from_utf8(self.bytes.get(5..5 + len)?).ok()
    }

    /// The boolean of a BOOLEAN value.
    pub fn as_bool(&self) -> Option<bool> {
        match self.bytes.first() {
            Some(&TRUE) => Some(true),
            Some(&FALSE) => Some(false),
            _ => None,
        }
    }

    fn slice(&self, from: usize, to: usize) -> JsonRef<'a> {
        JsonRef {
            bytes: self.bytes.get(from..to).unwrap_or(&[]),
        }
    }

    /// Element `i` of an array.
    pub fn index(&self, i: usize) -> Option<JsonRef<'a>> {
        if self.kind() != JsonType::Array || i >= self.len() {
            return None;
        }
        let n = self.len();
        let area = 5 + 4 * n;
        let start = if i == 0 {
            0
        } else {
            u32_at(self.bytes, 5 + 4 * (i - 1))
        };
        let end = u32_at(self.bytes, 5 + 4 * i);
        Some(self.slice(area + start, area + end))
    }

    /// Key `i` of an object (in key order).
    pub fn key(&self, i: usize) -> &'a str {
        let n = self.len();
        let start = if i == 0 {
            0
        } else {
            u32_at(self.bytes, 5 + 4 * (i - 1))
        };
        let end = u32_at(self.bytes, 5 + 4 * i);
        let area = 5 + 8 * n;
        self.bytes
            .get(area + start..area + end)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }

    /// Value `i` of an object (in key order).
    pub fn value(&self, i: usize) -> JsonRef<'a> {
        let n = self.len();
        let keys_len = if n == 0 {
            0
        } else {
            u32_at(self.bytes, 5 + 4 * (n - 1))
        };
        let area = 5 + 8 * n + keys_len;
        let table = 5 + 4 * n;
        let start = if i == 0 {
            0
        } else {
            u32_at(self.bytes, table + 4 * (i - 1))
        };
        let end = u32_at(self.bytes, table + 4 * i);
        self.slice(area + start, area + end)
    }

    /// The value of member `key` of an object: a binary search over the
    /// sorted keys (invariant 1).
    pub fn get(&self, key: &str) -> Option<JsonRef<'a>> {
        if self.kind() != JsonType::Object {
            return None;
        }
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match key_order(self.key(mid), key) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(self.value(mid)),
            }
        }
        None
    }

    /// The value as a number (`None` for non-numbers).
    pub fn number(&self) -> Option<Num> {
        Some(match *self.bytes.first()? {
            INT => Num::Int(u64_at(self.bytes, 1) as i64),
            UINT => Num::UInt(u64_at(self.bytes, 1)),
            DOUBLE => Num::Double(f64::from_bits(u64_at(self.bytes, 1))),
            DECIMAL => {
                let m = self.bytes.get(1..17)?;
                let mantissa = i128::from_le_bytes(m.try_into().ok()?);
                let scale = *self.bytes.get(17)? as u32;
                Num::Decimal(Decimal::try_from_i128_with_scale(mantissa, scale).ok()?)
            }
            WIDE_DECIMAL => {
                let m = self.bytes.get(1..33)?;
                let mantissa = ethnum::I256::from_le_bytes(m.try_into().ok()?);
                let scale = *self.bytes.get(33)? as u32;
                Num::Decimal(Decimal::from_parts(mantissa, scale)?)
            }
            _ => return None,
        })
    }

    /// Decodes the value into a tree.
    pub fn to_node(&self) -> Node {
        match self.kind() {
            JsonType::Null => Node::Null,
            JsonType::Bool => Node::Bool(self.as_bool() == Some(true)),
            JsonType::Int | JsonType::UInt | JsonType::Double | JsonType::Decimal => {
                match self.number() {
                    Some(Num::Int(i)) => Node::Int(i),
                    Some(Num::UInt(u)) => Node::UInt(u),
                    Some(Num::Double(d)) => Node::Double(d),
                    Some(Num::Decimal(d)) => Node::Decimal(d),
                    None => Node::Null,
                }
            }
            JsonType::Str => Node::Str(self.as_str().unwrap_or("").to_string()),
            JsonType::Array => Node::Array(
                (0..self.len())
                    .filter_map(|i| self.index(i))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(JsonRef::to_node)
                    .collect(),
            ),
            JsonType::Object => Node::Object(
                (0..self.len())
                    .map(|i| (self.key(i).to_string(), self.value(i).to_node()))
                    .collect(),
            ),
        }
    }

    /// Depth as JSON_DEPTH counts it.
    pub fn depth(&self) -> usize {
        match self.kind() {
            JsonType::Array if !self.is_empty() => {
                1 + (0..self.len())
                    .filter_map(|i| self.index(i))
                    .map(|e| e.depth())
                    .max()
                    .unwrap_or(0)
            }
            JsonType::Object if !self.is_empty() => {
                1 + (0..self.len())
                    .map(|i| self.value(i).depth())
                    .max()
                    .unwrap_or(0)
            }
            _ => 1,
        }
    }

    /// Appends MySQL's normalised text of the value.
    pub fn write_text(&self, out: &mut String) {
        match self.kind() {
            JsonType::Null => out.push_str("null"),
            JsonType::Bool => out.push_str(if self.as_bool() == Some(true) {
                "true"
            } else {
                "false"
            }),
            JsonType::Int | JsonType::UInt | JsonType::Double | JsonType::Decimal => {
                match self.number() {
                    Some(n) => out.push_str(&n.to_string()),
                    None => out.push_str("null"),
                }
            }
            JsonType::Str => quote_into(self.as_str().unwrap_or(""), out),
            JsonType::Array => {
                out.push('[');
                for i in 0..self.len() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    if let Some(e) = self.index(i) {
                        e.write_text(out);
                    }
                }
                out.push(']');
            }
            JsonType::Object => {
                out.push('{');
                for i in 0..self.len() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    quote_into(self.key(i), out);
                    out.push_str(": ");
                    self.value(i).write_text(out);
                }
                out.push('}');
            }
        }
    }

    /// MySQL's normalised text of the value.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }
}

/// MySQL's normalised text of an encoded document.
pub fn to_text(bytes: &[u8]) -> String {
    JsonRef::new(bytes).text()
}

/// A JSON number, for comparison and conversion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// Signed integer.
    Int(i64),
    /// Unsigned integer.
    UInt(u64),
    /// Double.
    Double(f64),
    /// Decimal.
    Decimal(Decimal),
}

impl Num {
    /// The number as a double.
    pub fn to_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::UInt(u) => u as f64,
            Num::Double(d) => d,
            Num::Decimal(d) => d.to_f64().unwrap_or(0.0),
        }
    }

    fn cmp(self, other: Num) -> Ordering {
        use Num::*;
        match (self, other) {
            (Int(a), Int(b)) => a.cmp(&b),
            (UInt(a), UInt(b)) => a.cmp(&b),
            (Int(a), UInt(b)) => (a as i128).cmp(&(b as i128)),
            (UInt(a), Int(b)) => (a as i128).cmp(&(b as i128)),
            (Decimal(a), Decimal(b)) => a.cmp(&b),
            (Decimal(a), Int(b)) => a.cmp(&crate::types::decimal::Decimal::from(b)),
            (Int(a), Decimal(b)) => crate::types::decimal::Decimal::from(a).cmp(&b),
            (a, b) => a
                .to_f64()
                .partial_cmp(&b.to_f64())
                .unwrap_or(Ordering::Equal),
        }
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::UInt(u) => write!(f, "{u}"),
            Num::Double(d) => f.write_str(&format_json_double(*d)),
            Num::Decimal(d) => write!(f, "{d}"),
        }
    }
}

/// A double as MySQL's JSON text prints it: like a DOUBLE column, except
/// that an integral value keeps ".0" (`CAST('1.0' AS JSON)` is `1.0`) and
/// exponents are written `e+NN` / `e-NN` as MySQL's `my_gcvt` does.
fn format_json_double(d: f64) -> String {
    // The shortest digits that read back as `d` (as MySQL's DOUBLE output;
    // `crate::types::value::format_double`, which this file may not import:
    // `value` imports it).
    let s = if d == 0.0 {
        "0".to_string()
    } else if (1e-6..1e15).contains(&d.abs()) {
        let s = format!("{d}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    } else {
        format!("{d:e}")
    };
    if let Some((m, e)) = s.split_once('e') {
        let e = if e.starts_with('-') {
            e.to_string()
        } else {
            format!("+{e}")
        };
        return format!("{m}e{e}");
    }
    if s.contains('.') || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

/// Appends `s` as a JSON string literal, escaped as MySQL escapes it
/// (`\"`, `\\`, `\b \f \n \r \t`, other control characters as `\u00XX`;
/// non-ASCII characters unescaped).
pub fn quote_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Compares two encoded values as MySQL 8 orders JSON (see "Order").
pub fn compare(a: JsonRef<'_>, b: JsonRef<'_>) -> Ordering {
    let (ka, kb) = (a.kind(), b.kind());
    if ka.rank() != kb.rank() {
        return ka.rank().cmp(&kb.rank());
    }
    match ka {
        JsonType::Null => Ordering::Equal,
        JsonType::Bool => a.as_bool().cmp(&b.as_bool()),
        JsonType::Int | JsonType::UInt | JsonType::Double | JsonType::Decimal => {
            match (a.number(), b.number()) {
                (Some(x), Some(y)) => x.cmp(y),
                _ => Ordering::Equal,
            }
        }
        JsonType::Str => a.as_str().cmp(&b.as_str()),
        JsonType::Array => {
            for i in 0..a.len().min(b.len()) {
                let (x, y) = (a.index(i), b.index(i));
                if let (Some(x), Some(y)) = (x, y) {
                    let o = compare(x, y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
            }
            a.len().cmp(&b.len())
        }
        JsonType::Object => {
            // Equal when the same keys hold equal values; otherwise a total
            // order of Canyon's choosing (MySQL leaves it unspecified).
            let o = a.len().cmp(&b.len());
            if o != Ordering::Equal {
                return o;
            }
            for i in 0..a.len() {
                let o = key_order(a.key(i), b.key(i));
                if o != Ordering::Equal {
                    return o;
                }
                let o = compare(a.value(i), b.value(i));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        }
    }
}

// ---------------------------------------------------------------------------
// Errors and storing into a JSON column.

/// MySQL's 3140 ER_INVALID_JSON_TEXT for a column: `Invalid JSON text:
/// "msg" at position N in value for column 'c'.`
pub fn invalid_text_for_column(message: &str, pos: usize, column: &str) -> Error {
    Error::Sql {
        code: 3140,
        sqlstate: *b"22032",
        message: format!(
            "Invalid JSON text: \"{message}\" at position {pos} in value for column '{column}'."
        ),
    }
}

/// MySQL's 3141 ER_INVALID_JSON_TEXT_IN_PARAM for argument `n` (1-based) of
/// function `func`.
pub fn invalid_text_in_arg(e: &ParseError, n: usize, func: &str) -> Error {
    Error::Sql {
        code: 3141,
        sqlstate: *b"22032",
        message: format!(
            "Invalid JSON text in argument {n} to function {func}: \"{}\" at position {}.",
            e.message, e.pos
        ),
    }
}

/// MySQL's 3143 ER_INVALID_JSON_PATH.
pub fn invalid_path(pos: usize) -> Error {
    Error::Sql {
        code: 3143,
        sqlstate: *b"42000",
        message: format!(
            "Invalid JSON path expression. The error is around character position {pos}."
        ),
    }
}

// ---------------------------------------------------------------------------
// Parsing JSON text.

/// Why JSON text did not parse: MySQL's (RapidJSON's) message and the byte
/// position it names.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// The message, as MySQL quotes it.
    pub message: &'static str,
    /// Byte offset of the error.
    pub pos: usize,
}

/// Parses JSON text into a tree (MySQL's rules: RFC 8259, a scalar is a
/// document, duplicate keys keep the last value).
pub fn parse(text: &[u8]) -> std::result::Result<Node, ParseError> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    if p.i >= p.s.len() {
        return Err(p.err("The document is empty."));
    }
    let v = p.value(0)?;
    p.ws();
    if p.i < p.s.len() {
        return Err(p.err("The document root must not be followed by other values."));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn err(&self, message: &'static str) -> ParseError {
        ParseError {
            message,
            pos: self.i,
        }
    }

    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> std::result::Result<Node, ParseError> {
        if depth >= MAX_DEPTH {
            return Err(self.err("The JSON document exceeds the maximum depth."));
        }
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                let mut members: Vec<(String, Node)> = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Node::Object(members));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.err("Missing a name for object member."));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.peek() != Some(b':') {
                        return Err(self.err("Missing a colon after a name of object member."));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    Node::object_set(&mut members, k, v);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Node::Object(members));
                        }
                        _ => return Err(self.err("Missing a comma or '}' after an object member.")),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Node::Array(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Node::Array(items));
                        }
                        _ => return Err(self.err("Missing a comma or ']' after an array element.")),
                    }
                }
            }
            Some(b'"') => Ok(Node::Str(self.string()?)),
            Some(b't') => self.literal(b"true", Node::Bool(true)),
            Some(b'f') => self.literal(b"false", Node::Bool(false)),
            Some(b'n') => self.literal(b"null", Node::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("Invalid value.")),
        }
    }

    fn literal(&mut self, word: &[u8], v: Node) -> std::result::Result<Node, ParseError> {
        // RapidJSON (MySQL's parser) names the first byte that differs.
        for &c in word {
            if self.peek() != Some(c) {
                return Err(self.err("Invalid value."));
            }
            self.i += 1;
        }
        Ok(v)
    }

    fn number(&mut self) -> std::result::Result<Node, ParseError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.i += 1;
                }
            }
            _ => return Err(self.err("Invalid value.")),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("Missing fraction part in number."));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integral = false;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("Missing exponent in number."));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII digits and signs");
        if integral {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Node::Int(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Node::UInt(u));
            }
        }
        match text.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok(Node::Double(d)),
            _ => Err(ParseError {
                message: "Number too big to be stored in double.",
                pos: start,
            }),
        }
    }

    fn hex4(&mut self) -> std::result::Result<u32, ParseError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err("Incorrect hex digit after \\u escape in string.")),
            };
            v = v * 16 + d as u32;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> std::result::Result<String, ParseError> {
        let open = self.i;
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError {
                    message: "Missing a closing quotation mark in string.",
                    pos: open,
                });
            };
            match c {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' => {
                    self.i += 1;
                    let esc = self.peek();
                    self.i += 1;
                    match esc {
                        Some(b'"') => out.push(b'"'),
                        Some(b'\\') => out.push(b'\\'),
                        Some(b'/') => out.push(b'/'),
                        Some(b'b') => out.push(8),
                        Some(b'f') => out.push(12),
                        Some(b'n') => out.push(b'\n'),
                        Some(b'r') => out.push(b'\r'),
                        Some(b't') => out.push(b'\t'),
                        Some(b'u') => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) {
                                if self.s[self.i..].starts_with(b"\\u") {
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&lo) {
                                        return Err(
                                            self.err("The surrogate pair in string is invalid.")
                                        );
                                    }
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                } else {
                                    return Err(
                                        self.err("The surrogate pair in string is invalid.")
                                    );
                                }
                            } else if (0xDC00..0xE000).contains(&cp) {
                                return Err(self.err("The surrogate pair in string is invalid."));
                            }
                            let ch = char::from_u32(cp).ok_or_else(|| {
                                self.err("The surrogate pair in string is invalid.")
                            })?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err("Invalid escape character in string."));
                        }
                    }
                }
                c if c < 0x20 => return Err(self.err("Invalid encoding in string.")),
                c => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| ParseError {
            message: "Invalid encoding in string.",
            pos: open,
        })
    }
}

// ---------------------------------------------------------------------------
// Paths.

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Leg {
    /// `.key` / `."key"`.
    Key(String),
    /// `.*`.
    AnyKey,
    /// `[n]`; `[last - n]` is `FromEnd(n)`.
    Index(usize),
    /// `[last]` / `[last - n]`.
    FromEnd(usize),
    /// `[*]`.
    AnyIndex,
    /// `**`: the value and all its descendants.
    Ellipsis,
}

/// A parsed path: `$` followed by legs.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    /// The legs after `$`.
    pub legs: Vec<Leg>,
}

impl Path {
    /// Whether the path has `*` or `**` (it may then match many values).
    pub fn has_wildcard(&self) -> bool {
        self.legs
            .iter()
            .any(|l| matches!(l, Leg::AnyKey | Leg::AnyIndex | Leg::Ellipsis))
    }
}

/// Parses a MySQL path expression; the error is the character position
/// MySQL's 3143 names.
pub fn parse_path(text: &str) -> std::result::Result<Path, usize> {
    let s = text.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while matches!(s.get(*i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    if s.get(i) != Some(&b'$') {
        return Err(i + 1);
    }
    i += 1;
    let mut legs = Vec::new();
    loop {
        skip_ws(&mut i);
        match s.get(i) {
            None => break,
            Some(b'.') => {
                i += 1;
                skip_ws(&mut i);
                match s.get(i) {
                    Some(b'*') => {
                        i += 1;
                        legs.push(Leg::AnyKey);
                    }
                    Some(b'"') => {
                        let mut p = Parser { s, i };
                        let k = p.string().map_err(|_| p.i + 1)?;
                        i = p.i;
                        legs.push(Leg::Key(k));
                    }
                    _ => {
                        let start = i;
                        while let Some(&c) = s.get(i) {
                            let ok =
                                c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
                            if !ok {
                                break;
                            }
                            i += 1;
                        }
                        if i == start || s[start].is_ascii_digit() {
                            return Err(i + 1);
                        }
                        legs.push(Leg::Key(text[start..i].to_string()));
                    }
                }
            }
            Some(b'[') => {
                i += 1;
                skip_ws(&mut i);
                let num = |i: &mut usize| -> Option<usize> {
                    let start = *i;
                    while matches!(s.get(*i), Some(b'0'..=b'9')) {
                        *i += 1;
                    }
                    text.get(start..*i)?.parse::<usize>().ok()
                };
                let leg = if s.get(i) == Some(&b'*') {
                    i += 1;
                    Leg::AnyIndex
                } else if s[i..].starts_with(b"last") {
                    i += 4;
                    skip_ws(&mut i);
                    if s.get(i) == Some(&b'-') {
                        i += 1;
                        skip_ws(&mut i);
                        Leg::FromEnd(num(&mut i).ok_or(i + 1)?)
                    } else {
                        Leg::FromEnd(0)
                    }
                } else {
                    Leg::Index(num(&mut i).ok_or(i + 1)?)
                };
                skip_ws(&mut i);
                if s.get(i) != Some(&b']') {
                    return Err(i + 1);
                }
                i += 1;
                legs.push(leg);
            }
            Some(b'*') if s.get(i + 1) == Some(&b'*') => {
                i += 2;
                legs.push(Leg::Ellipsis);
            }
            Some(_) => return Err(i + 1),
        }
    }
    if legs.last() == Some(&Leg::Ellipsis) {
        return Err(text.len());
    }
    Ok(Path { legs })
}

impl std::fmt::Display for Path {
    /// The path as MySQL prints it (JSON_SEARCH): `$.a[0]."b c"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("$")?;
        for leg in &self.legs {
            match leg {
                Leg::Key(k) => {
                    let plain = !k.is_empty()
                        && !k.as_bytes()[0].is_ascii_digit()
                        && k.bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$');
                    if plain {
                        write!(f, ".{k}")?;
                    } else {
                        let mut q = String::new();
                        quote_into(k, &mut q);
                        write!(f, ".{q}")?;
                    }
                }
                Leg::AnyKey => f.write_str(".*")?,
                Leg::Index(n) => write!(f, "[{n}]")?,
                Leg::FromEnd(0) => f.write_str("[last]")?,
                Leg::FromEnd(n) => write!(f, "[last-{n}]")?,
                Leg::AnyIndex => f.write_str("[*]")?,
                Leg::Ellipsis => f.write_str("**")?,
            }
        }
        Ok(())
    }
}

/// Appends every value `legs` reaches from `v`, in document order. An index
/// leg on a non-array reads the value as a one-element array (MySQL's
/// auto-wrapping: `$[0]` of a scalar is the scalar).
pub fn seek<'a>(v: JsonRef<'a>, legs: &[Leg], out: &mut Vec<JsonRef<'a>>) {
    let Some((leg, rest)) = legs.split_first() else {
        out.push(v);
        return;
    };
    match leg {
        Leg::Key(k) => {
            if let Some(c) = v.get(k) {
                seek(c, rest, out);
            }
        }
        Leg::AnyKey => {
            if v.kind() == JsonType::Object {
                for i in 0..v.len() {
                    seek(v.value(i), rest, out);
                }
            }
        }
        Leg::Index(n) | Leg::FromEnd(n) => {
            let len = if v.kind() == JsonType::Array {
                v.len()
            } else {
                1
            };
            let at = match leg {
                Leg::Index(_) => Some(*n),
                _ => len.checked_sub(1 + n),
            };
            match at {
                Some(at) if at < len => {
                    if v.kind() == JsonType::Array {
                        if let Some(c) = v.index(at) {
                            seek(c, rest, out);
                        }
                    } else {
                        seek(v, rest, out);
                    }
                }
                _ => {}
            }
        }
        Leg::AnyIndex => {
            if v.kind() == JsonType::Array {
                for i in 0..v.len() {
                    if let Some(c) = v.index(i) {
                        seek(c, rest, out);
                    }
                }
            }
        }
        Leg::Ellipsis => {
            seek(v, rest, out);
            match v.kind() {
                JsonType::Array => {
                    for i in 0..v.len() {
                        if let Some(c) = v.index(i) {
                            seek(c, legs, out);
                        }
                    }
                }
                JsonType::Object => {
                    for i in 0..v.len() {
                        seek(v.value(i), legs, out);
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        to_text(&encode(&parse(s.as_bytes()).expect("valid JSON")))
    }

    #[test]
    fn normalised_text() {
        assert_eq!(norm(r#"{"b":[1,2],"a":1}"#), r#"{"a": 1, "b": [1, 2]}"#);
        assert_eq!(
            norm(r#"{"bb":1,"a":2,"c":3}"#),
            r#"{"a": 2, "c": 3, "bb": 1}"#
        );
        assert_eq!(norm(r#"{"a":1,"a":2}"#), r#"{"a": 2}"#);
        assert_eq!(norm(r#""\u00e9\n""#), "\"é\\n\"");
        assert_eq!(norm("18446744073709551615"), "18446744073709551615");
        assert_eq!(norm("18446744073709551616"), "1.8446744073709552e+19");
        assert_eq!(norm("1.0"), "1.0");
        assert_eq!(norm("-0.5e-3"), "-0.0005");
        assert_eq!(norm(r#""\ud83d\ude00""#), "\"😀\"");
    }

    #[test]
    fn parse_errors_name_mysql_messages() {
        assert_eq!(parse(b"").unwrap_err().message, "The document is empty.");
        assert_eq!(
            parse(b"{").unwrap_err().message,
            "Missing a name for object member."
        );
        assert_eq!(parse(b"[1,]").unwrap_err().pos, 3);
        assert_eq!(
            parse(b"1 2").unwrap_err().message,
            "The document root must not be followed by other values."
        );
        let deep = "[".repeat(101) + &"]".repeat(101);
        assert!(parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn paths_and_lookup() {
        let doc = encode(&parse(br#"{"a":[10,{"b":"x"}],"c d":true}"#).expect("valid"));
        let get = |p: &str| {
            let path = parse_path(p).expect("valid path");
            let mut out = Vec::new();
            seek(JsonRef::new(&doc), &path.legs, &mut out);
            out.iter().map(JsonRef::text).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(get("$.a[1].b"), "\"x\"");
        assert_eq!(get("$.\"c d\""), "true");
        assert_eq!(get("$.a[last]"), "{\"b\": \"x\"}");
        assert_eq!(get("$.a[0][0]"), "10");
        assert_eq!(get("$**.b"), "\"x\"");
        assert_eq!(get("$.*"), "[10, {\"b\": \"x\"}] true");
        assert!(parse_path("a").is_err());
        assert!(parse_path("$.").is_err());
        assert!(parse_path("$**").is_err());
        assert_eq!(
            parse_path("$.a[last-1].\"x y\"").map(|p| p.to_string()),
            Ok("$.a[last-1].\"x y\"".to_string())
        );
    }

    #[test]
    fn order_follows_mysql_precedence() {
        let v = |s: &str| encode(&parse(s.as_bytes()).expect("valid"));
        let cmp = |a: &str, b: &str| compare(JsonRef::new(&v(a)), JsonRef::new(&v(b)));
        assert_eq!(cmp("1", "1.0"), Ordering::Equal);
        assert_eq!(cmp("true", "[1]"), Ordering::Greater);
        assert_eq!(cmp("\"a\"", "99"), Ordering::Greater);
        assert_eq!(cmp("[1,2]", "[1,2,0]"), Ordering::Less);
        assert_eq!(cmp(r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#), Ordering::Equal);
        assert_eq!(cmp("null", "-5"), Ordering::Less);
    }
}
